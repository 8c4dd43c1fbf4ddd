"""What the tests, bench/ and scripts/ share to drive the real app: ``browser`` (the system Chromium, a
``streamlit run app.py`` or ``python -m studio.serve`` on a free port, waiting on the script's state),
``ws_client`` (a student without a browser, speaking Streamlit's websocket protocol and polling the live feed)
and ``hostile`` (lesson 6's hostile submissions). Not installed: run from the repository root."""
