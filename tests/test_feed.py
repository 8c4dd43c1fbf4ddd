"""The live feed (studio/feed.py): what a live chart reads while its run is going."""

from __future__ import annotations

import gc
import math
from pathlib import Path

from streamlit.web.server.app_discovery import discover_asgi_app

from studio import feed
from studio.runner import LiveRun
from tests.conftest import feed_get as get

ROOT = Path(__file__).resolve().parents[1]


def counting_run(n: int = 5) -> LiveRun:
    run = LiveRun("test", None, lambda: (i for i in range(n)), lambda s: s)
    run.start().join(5)
    return run


def test_streamlit_run_serves_app_py_as_the_app_with_its_feed():
    """`streamlit run app.py` finds ``app`` (an st.App with the feed's route) and serves it."""
    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    assert "routes=ROUTES" in (ROOT / "app.py").read_text()


def test_a_published_run_is_served_as_its_payload_now():
    run = counting_run()
    url = feed.publish(run, lambda r: {"status": r.status, "states": r.view()[0]})
    assert url == f"/api/live/{run.token}"
    assert get(url) == (200, {"status": "done", "states": [0, 1, 2, 3, 4]})


def test_tokens_are_long_and_never_repeat():
    tokens = {LiveRun("test", None, iter, int).token for _ in range(100)}
    assert len(tokens) == 100 and min(len(t) for t in tokens) >= 22  # 16 random bytes


def test_an_unknown_or_ended_run_gets_a_plain_404():
    status, body = get("/api/live/no-such-token")
    assert status == 404 and "No such run" in body["error"]
    run = counting_run()
    url = feed.publish(run, lambda r: {"count": r.count})
    assert get(url)[0] == 200
    del run
    gc.collect()  # the session dropped the run: the feed forgets it too
    assert get(url)[0] == 404


def test_a_failing_payload_is_a_500_and_never_nan(caplog):
    run = counting_run()
    url = feed.publish(run, lambda r: 1 / 0)
    status, body = get(url)
    assert status == 500 and "server log" in body["error"]
    assert "ZeroDivisionError" in caplog.text
    feed.publish(run, lambda r: {"loss": math.nan})  # the browser's JSON.parse would reject NaN
    assert get(url)[0] == 500
