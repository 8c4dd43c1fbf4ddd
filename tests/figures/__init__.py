"""Figure builders (autodiff_core.figures): themes, colours, axes, live payloads and replays."""
