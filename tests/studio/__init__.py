"""The app's shared machinery: feed, runner, budget, links, presets, lesson registry, sidebar, presenter,
classroom, serve and proxy, load, setup and install scripts."""
