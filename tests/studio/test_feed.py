"""The live feed (studio/feed.py): what a live chart reads while its run is going."""

from __future__ import annotations

import gc
import json
import math
import threading
import time
from pathlib import Path

import pytest
from starlette.requests import Request
from streamlit.web.server.app_discovery import discover_asgi_app

from studio import budget, feed, keeping, reaper, turns
from studio.runner import LiveRun
from tests.conftest import feed_get as get

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fresh_budget(monkeypatch):
    """Each test starts with the server's memory budget empty and turns free (runs of other tests, held
    by a gate, may hold some)."""
    monkeypatch.setattr(budget, "BUDGET", budget.Budget())
    monkeypatch.setattr(turns, "TURNS", turns.Turns(100))
    monkeypatch.setattr(turns, "PACED", turns.Turns(100))


def poll(url: str, after=None, layout: str = "") -> tuple[int, dict, int]:
    """Ask the feed as the chart does (``?after=<seq>&layout=<id>``): (status, body, bytes)."""
    [route] = feed.ROUTES
    path, _, _ = url.partition("?")
    query = b"" if after is None else f"after={after}&layout={layout}".encode()
    match, scope = route.matches({"type": "http", "path": path, "method": "GET", "headers": []})
    request = Request({"type": "http", "method": "GET", "headers": [], "query_string": query, **scope})
    response = feed.live(request)  # the route (feed.held) without its hold
    return response.status_code, json.loads(response.body), len(response.body)


def counting_run(n: int = 5) -> LiveRun:
    run = LiveRun("test", None, lambda: (i for i in range(n)), lambda s: s)
    run.start().join(5)
    return run


def states_payload(builds: list | None = None, window: int = 60):
    """A payload in the live chart's protocol: a state per snapshot (its seq the step), one curve."""
    def payload(run: LiveRun) -> dict:
        if builds is not None:
            builds.append(run.count)
        snaps, _ = run.view()
        top = max(snaps, default=0)
        return {"run": run.run_id, "status": run.status, "status_text": f"step {top}",
                "layout": {"yaxis": {"range": [0, 10 if top < 10 else 100]}},
                "base": [{"x": list(range(1000)), "y": list(range(1000)), "mode": "lines" if top < 20 else "markers"}],
                "curves": {3: {"x": list(snaps), "y": [s * 0.5 for s in snaps]}},
                "states": [{"seq": s, "step": s, "caption": f"step {s}"} for s in snaps[-window:]]}
    return payload


class Gate:
    """A trainer that yields a snapshot each time the test opens the gate."""

    def __init__(self) -> None:
        self.go = threading.Semaphore(0)
        self.made = 0

    def stream(self):
        def gen():
            while True:
                self.go.acquire()
                yield self.made
                self.made += 1
        return gen()

    def step(self, run: LiveRun, n: int = 1) -> None:
        target = run.count + n
        for _ in range(n):
            self.go.release()
        deadline = time.monotonic() + 5
        while run.count < target and time.monotonic() < deadline:
            time.sleep(0.001)


def gated_run() -> tuple[LiveRun, Gate]:
    gate = Gate()
    run = LiveRun("test", None, gate.stream, lambda s: s)
    return run.start(), gate


def test_streamlit_run_serves_app_py_as_the_app_with_its_feed():
    """`streamlit run app.py` finds ``app`` (an st.App with the feed's route) and serves it."""
    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    text = (ROOT / "app.py").read_text()
    assert "routes=ROUTES" in text or "feed.ROUTES" in text
    assert "Middleware(feed.FastLane, routes=polls)" in text  # polls are answered ahead of Streamlit's middleware


def test_a_published_run_is_served_as_its_payload_now():
    run = counting_run()
    url = feed.publish(run, lambda r: {"status": r.status, "states": r.view()[0]})
    assert url == f"/api/live/{run.token}"
    status, body = get(url)
    assert status == 200 and body["status"] == "done" and body["states"] == [0, 1, 2, 3, 4]


def test_tokens_are_long_and_never_repeat():
    tokens = {LiveRun("test", None, iter, int).token for _ in range(100)}
    assert len(tokens) == 100 and min(len(t) for t in tokens) >= 22  # 16 random bytes


def test_an_unknown_or_ended_run_gets_a_plain_404():
    status, body = get("/api/live/no-such-token")
    assert status == 404 and "No such run" in body["error"] and body["gone"]
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
    run.feed_cache = None
    feed.publish(run, lambda r: {"loss": math.nan})  # the browser's JSON.parse would reject NaN
    assert get(url)[0] == 500


def test_a_poll_brings_only_what_is_new_since_the_charts_newest_state():
    run, gate = gated_run()
    url = feed.publish(run, states_payload())
    gate.step(run, 5)  # states 0..4
    status, first, _ = poll(url, after=-1)
    assert status == 200 and [s["seq"] for s in first["states"]] == [0, 1, 2, 3, 4]
    assert first["curves"]["3"] == {"x": [0, 1, 2, 3, 4], "y": [0, 0.5, 1, 1.5, 2]}
    assert first["layout"] == {"yaxis": {"range": [0, 10]}}  # a chart without the layout gets it, and the base
    layout = first["layout_id"]
    gate.step(run, 2)
    _, more, _ = poll(url, after=4, layout=layout)
    assert [s["seq"] for s in more["states"]] == [5, 6] and more["curves"]["3"]["x"] == [5, 6]
    assert "layout" not in more and "base" not in more  # unchanged: the points are not sent again
    assert more["status"] == "running" and more["status_text"] == "step 6"
    gate.step(run, 4)  # step 10: the y range changes, so the layout comes again
    _, changed, _ = poll(url, after=6, layout=layout)
    assert changed["layout"]["yaxis"]["range"] == [0, 100] and changed["layout_id"] != layout
    assert "base" not in changed  # the points stay where they are
    assert feed.layout_id(changed["layout"], first["base"]) == changed["layout_id"]  # as live_chart.py says
    gate.step(run, 10)  # step 20: a trace's style changes (markers): the base traces come again
    _, styled, _ = poll(url, after=10, layout=changed["layout_id"])
    assert styled["base"][0]["mode"] == "markers" and styled["base"][0]["x"] == list(range(1000))
    run.stop()


def test_a_poll_with_nothing_new_builds_nothing_and_is_small():
    builds: list = []
    run, gate = gated_run()
    url = feed.publish(run, states_payload(builds))
    gate.step(run, 3)
    _, body, _ = poll(url, after=-1)
    for _ in range(50):  # fifty tabs, or one tab fifty times: one build
        status, idle, size = poll(url, after=2, layout=body["layout_id"])
        assert status == 200 and idle["states"] == [] and idle["curves"] == {} and "layout" not in idle
    assert len(builds) == 1 and size < 200
    gate.step(run)
    poll(url, after=2, layout=body["layout_id"])
    assert len(builds) == 2  # a new state: built once more
    run.stop()


def test_each_state_is_encoded_once_however_many_builds_carry_it():
    run, gate = gated_run()
    url = feed.publish(run, states_payload())
    gate.step(run, 3)
    poll(url, after=-1)
    first = dict(run.feed_cache.built.states)
    gate.step(run)
    poll(url, after=-1)
    again = dict(run.feed_cache.built.states)
    assert set(again) == {0, 1, 2, 3} and all(again[k] is first[k] for k in first)  # the same bytes objects
    run.stop()


def test_the_status_line_moves_on_without_new_states(monkeypatch):
    builds: list = []
    run, gate = gated_run()
    url = feed.publish(run, states_payload(builds))
    gate.step(run)
    poll(url, after=0)
    monkeypatch.setattr(feed, "STATUS_EVERY", 0.0)  # the clock in the status line: rebuilt when old
    poll(url, after=0)
    assert len(builds) == 2
    run.stop()


def test_a_chart_far_behind_gets_the_newest_window_and_every_curve_point():
    run, gate = gated_run()
    url = feed.publish(run, states_payload(window=10))
    gate.step(run, 30)
    _, body, _ = poll(url, after=3)
    assert [s["seq"] for s in body["states"]] == list(range(20, 30))  # it jumps ahead, as before
    assert body["curves"]["3"]["x"] == list(range(4, 30))  # but its curves have no gap
    run.stop()


def test_a_bad_after_is_a_400():
    run = counting_run()
    url = feed.publish(run, states_payload())
    assert poll(url, after="x")[0] == 400


def test_a_released_run_is_revoked_and_its_snapshots_dropped():
    run, gate = gated_run()
    url = feed.publish(run, states_payload())
    gate.step(run, 3)
    assert poll(url, after=-1)[0] == 200
    run.release()
    status, body, _ = poll(url, after=-1)
    assert status == 410 and body["gone"] and "session" in body["error"]
    assert run.status == "stopped" and run.view() == ([], 3) and run.payload is None
    feed.publish(run, states_payload())  # a later script run cannot bring it back
    assert poll(url, after=-1)[0] == 410


def test_a_run_outlives_a_blip_stops_after_the_grace_period_and_is_released_with_its_session(monkeypatch):
    alive, kept_by_streamlit = {"s1": True, "s2": True}, {"s1": True, "s2": True}
    monkeypatch.setattr(reaper, "_session_alive", lambda sid: sid is None or alive[sid])
    monkeypatch.setattr(reaper, "_session_kept", lambda sid: sid is None or kept_by_streamlit[sid])
    monkeypatch.setattr(reaper, "REAP_EVERY", 3600.0)  # the test reaps by hand
    gate1, gate2 = Gate(), Gate()
    kept = LiveRun("test", None, gate1.stream, lambda s: s, session_id="s1").start()
    away = LiveRun("test", None, gate2.stream, lambda s: s, session_id="s2").start()
    urls = [feed.publish(r, states_payload()) for r in (kept, away)]
    gate1.step(kept)
    gate2.step(away)
    alive["s2"] = False  # its websocket closed: Streamlit keeps the session for the page to come back
    now = time.monotonic()
    assert reaper.reap(now) == 0 and reaper.reap(now + reaper.GRACE - 1) == 0
    gate2.step(away)  # a network blip: the run goes on, and its feed answers
    assert away.running and poll(urls[1], after=-1)[0] == 200 and away.view()[1] == 2
    assert reaper.reap(now + reaper.GRACE + 0.1) == 0  # away too long: stopped, and what it recorded is kept
    assert away.status == "stopped" and away.message == reaper.AWAY and not away.released
    assert away.view()[1] == 2 and poll(urls[1], after=-1)[0] == 200
    kept_by_streamlit["s2"] = False  # Streamlit dropped the session: nobody can come back to it
    assert reaper.reap(now + reaper.GRACE + 1.2) == 1
    assert away.released and poll(urls[1], after=-1)[0] == 410
    assert not kept.released and kept.running and poll(urls[0], after=-1)[0] == 200
    kept.stop()


def test_a_run_comes_back_with_its_page_within_the_grace_period(monkeypatch):
    alive = {"s1": False}
    monkeypatch.setattr(reaper, "_session_alive", lambda sid: sid is None or alive[sid])
    monkeypatch.setattr(reaper, "_session_kept", lambda sid: True)
    monkeypatch.setattr(reaper, "REAP_EVERY", 3600.0)
    gate = Gate()
    run = LiveRun("test", None, gate.stream, lambda s: s, session_id="s1").start()
    gate.step(run)
    now = time.monotonic()
    reaper.reap(now)
    alive["s1"] = True  # reconnected after 50 s: the clock starts again at its next blip
    reaper.reap(now + reaper.GRACE - 10)
    alive["s1"] = False
    assert reaper.reap(now + reaper.GRACE + 5) == 0 and run.running
    run.stop()


def test_stop_shows_at_once_even_in_the_middle_of_a_long_step():
    started = threading.Event()

    def slow():
        yield 0
        started.set()
        time.sleep(3)  # a step far longer than Stop may take
        yield 1

    run = LiveRun("test", None, slow, lambda s: s).start()
    started.wait(5)
    t0 = time.perf_counter()
    run.stop()
    assert time.perf_counter() - t0 < 0.1 and run.status == "stopped" and not run.running
    run.join(5)
    assert run.status == "stopped" and run.view() == ([0], 1)  # the step in hand is dropped


def test_snapshots_kept_are_bounded_in_bytes_as_well_as_in_number():
    big = [0.5] * 5000  # about 40 KB, as a playground surface
    run = LiveRun("test", None, lambda: ((i, big) for i in range(2000)), lambda s: s[0]).start()
    run.join(10)
    kept, count = run.view()
    assert count == 2000 and len(kept) * keeping.size_of(kept[0]) <= keeping.KEPT_BYTES * 1.05
    assert kept[0][0] == 0 and kept[-1][0] == 1999


def test_a_run_too_big_for_the_server_is_refused_with_the_limit_named(monkeypatch):
    from autodiff_core import TwoLayerConfig

    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": 200 * 2**20})
    config = TwoLayerConfig(N=10_000, D_in=5000, H=1, D_out=1000)  # 60 million numbers: half a GB at its peak
    run = LiveRun("two_layer", config, lambda: pytest.fail("allocated"), lambda s: s.step).start()
    assert run.status == "error" and not run.running
    need = f"about {budget.estimate(config).memory / 2**20:.0f} MB"
    assert need in run.message and "200 MB" in run.message and "Make N, D_in or H smaller" in run.message


def test_a_step_slower_than_the_limit_is_refused(monkeypatch):
    from autodiff_core import TwoLayerConfig

    monkeypatch.setattr(budget, "_rates", {("cpu", 4): 1e9})  # a slow machine: 1 GFLOP/s
    config = TwoLayerConfig(N=1000, D_in=1000, H=1000)  # 6 GFLOP a step
    run = LiveRun("two_layer", config, lambda: pytest.fail("allocated"), lambda s: s.step).start()
    assert run.status == "error" and "a step" in run.message and "Stop" in run.message


def test_estimates_follow_the_sizes_and_the_dtype():
    from autodiff_core import TwoLayerConfig

    small, big = budget.estimate(TwoLayerConfig()), budget.estimate(TwoLayerConfig(N=640, H=1000))
    wide = budget.estimate(TwoLayerConfig(dtype="float64"))
    assert big.memory > 5 * small.memory and big.step_seconds > 50 * small.step_seconds
    assert wide.memory == pytest.approx(2 * small.memory, rel=0.01)


def test_runs_over_the_budget_wait_in_a_visible_queue(monkeypatch):
    from autodiff_core import TwoLayerConfig

    config = TwoLayerConfig()
    need = budget.estimate(config).memory
    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": int(1.5 * need)})  # room for one at a time
    g1, g2 = Gate(), Gate()
    first = LiveRun("two_layer", config, g1.stream, lambda s: s).start()
    g1.step(first)
    second = LiveRun("two_layer", config, g2.stream, lambda s: s).start()
    deadline = time.monotonic() + 5
    while second.status != "queued" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert second.status == "queued" and second.running and second.message.startswith("Waiting: 1 run is using")
    first.stop()
    assert second.status == "queued"  # the first still holds its memory until its step in hand ends
    g1.go.release()
    first.join(5)
    g2.step(second)
    assert second.status == "running" and second.count == 1
    second.stop()
    g2.go.release()
    second.join(5)
    assert budget.BUDGET.used("cpu") == 0


def test_a_small_run_never_waits_behind_a_big_one_and_the_big_one_says_why(monkeypatch):
    """Three big runs, each a third of the budget: two go (a big run never takes the quarter kept for small
    ones), the third waits and says so with its place. A small run then starts at once, and the time a run
    spent queued is not reported as training time."""
    from studio.live_view import status_text

    limit = 3 * 2**30
    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": limit})
    sizes = {"big": limit // 3, "small": 2**20}
    monkeypatch.setattr(budget, "estimate", lambda config, activation=None: budget.Cost(sizes[config], 0.0, "cpu"))
    gates = [Gate() for _ in range(5)]
    bigs = [LiveRun("test", "big", g.stream, lambda s: s).start() for g in gates[:3]]
    for run, gate in zip(bigs[:2], gates, strict=False):
        gate.step(run)
    deadline = time.monotonic() + 5
    while bigs[2].status != "queued" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [r.status for r in bigs] == ["running", "running", "queued"]
    assert bigs[2].message == ("Waiting: 2 runs are using this server's memory for the CPU (yours needs about "
                               "1.0 GB); you are next.")
    fourth = LiveRun("test", "big", gates[3].stream, lambda s: s).start()
    while fourth.status != "queued" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fourth.message.endswith("; 1 run ahead of yours.")
    assert status_text(fourth, "step", 100) == fourth.message  # on screen, in place of "Training…"
    small = LiveRun("test", "small", gates[4].stream, lambda s: s).start()
    gates[4].step(small)
    assert small.status == "running" and small.count == 1  # at once, the big ones still waiting
    assert bigs[2].status == fourth.status == "queued"
    time.sleep(0.3)
    for run in bigs[:2]:
        run.stop()
    for gate in gates[:2]:
        gate.go.release()
    gates[2].step(bigs[2])
    assert bigs[2].status == "running" and bigs[2].began - bigs[2].started >= 0.3
    assert float(status_text(bigs[2], "step", 100).split("… ")[1].split(" s")[0]) < 0.3  # queued time not counted
    for run, gate in zip([bigs[2], fourth, small], [gates[2], gates[3], gates[4]], strict=True):
        run.stop()
        gate.go.release()
    for run in [*bigs, fourth, small]:  # the first two were stopped above: their threads end too
        run.join(5)
    assert budget.BUDGET.used("cpu") == 0


def test_a_run_bigger_than_one_run_may_be_is_refused_in_words(monkeypatch):
    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": 4 * 2**30})
    monkeypatch.setattr(budget, "estimate", lambda config, activation=None: budget.Cost(int(3.5 * 2**30), 0.0, "cpu"))
    run = LiveRun("test", None, lambda: pytest.fail("started"), lambda s: s).start()
    assert run.status == "error" and "lets one run on the CPU use 3.0 GB (all runs together 4.0 GB)" in run.message


def test_stop_ends_a_queued_run_without_it_ever_starting(monkeypatch):
    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": 0})
    monkeypatch.setattr(budget, "estimate", lambda config, activation=None: budget.Cost(0, 0.0, "cpu"))
    monkeypatch.setattr(budget.BUDGET, "_used", {"cpu": 1})  # full
    run = LiveRun("test", None, lambda: pytest.fail("started"), lambda s: s).start()
    deadline = time.monotonic() + 5
    while run.status != "queued" and time.monotonic() < deadline:
        time.sleep(0.01)
    run.stop()
    run.join(2)
    assert run.status == "stopped" and not run._thread.is_alive()


def test_full_speed_runs_take_turns_first_come_first_served(monkeypatch):
    monkeypatch.setattr(turns, "TURNS", turns.Turns(1))
    monkeypatch.setattr(turns, "QUANTUM", 0.0)  # a turn is one step
    order: list[str] = []

    def stream(name):
        def gen():
            for i in range(5):
                order.append(name)
                time.sleep(0.002)
                yield i
        return gen

    runs = [LiveRun("test", None, stream(n), lambda s: s) for n in "abc"]
    turns.TURNS.acquire()  # hold the only turn until all three wait for it
    for r in runs:
        r.start()
        time.sleep(0.05)
    turns.TURNS.release()
    for r in runs:
        r.join(5)
    assert all(r.status == "done" for r in runs)
    assert order[:6] == list("abcabc")  # in turns, not one run to its end


def test_small_paced_runs_take_turns_first_come_first_served_and_a_long_step_waits_for_none(monkeypatch):
    """Paced runs with small steps compute one at a time (PACED), a burst a turn (here a step: QUANTUM 0), so
    thirty of them do not hand the GIL to one another at every torch call; a paced run whose steps are long never
    takes one (it would hold every small run up for a whole step)."""
    monkeypatch.setattr(turns, "PACED", turns.Turns(1))
    monkeypatch.setattr(turns, "QUANTUM", 0.0)
    inside, most, order = [0], [0], []
    lock = threading.Lock()

    def stream(name):
        def gen():
            for i in range(4):
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                order.append(name)
                time.sleep(0.01)
                with lock:
                    inside[0] -= 1
                yield i
        return gen

    turns.PACED.acquire()  # hold the only turn until all three wait for it
    runs = []
    for n in "abc":
        runs.append(LiveRun("test", None, stream(n), lambda s: s, speed=1e6).start())
        time.sleep(0.05)
    turns.PACED.release()
    for r in runs:
        r.join(5)
    assert all(r.status == "done" and r.count == 4 for r in runs) and most[0] == 1  # never two steps at once
    assert "".join(order[:6]) == "abcabc"  # a turn each, first come first served: not a run to its end

    turns.PACED.acquire()  # every paced turn taken (say, by a slow step of a small run)
    monkeypatch.setattr(budget, "estimate", lambda config, act=None: budget.Cost(2**20, 0.5, "cpu"))
    long = LiveRun("test", None, lambda: (i for i in range(3)), lambda s: s, speed=1e6).start()
    long.join(5)
    turns.PACED.release()
    assert long.status == "done" and long.count == 3


def test_paced_runs_never_wait_for_a_full_speed_turn(monkeypatch):
    monkeypatch.setattr(turns, "TURNS", turns.Turns(1))
    turns.TURNS.acquire()  # every turn taken (say, by a long full-speed step)
    run = LiveRun("test", None, lambda: (i for i in range(3)), lambda s: s, speed=1000.0).start()
    run.join(5)
    turns.TURNS.release()
    assert run.status == "done" and run.count == 3


def asgi_get(app, path: str, query: str = "", gzip_ok: bool = False) -> tuple[int, dict, bytes]:
    """One GET through an ASGI app, as uvicorn would send it: (status, headers, body as sent)."""
    import asyncio

    sent: list[dict] = []
    headers = [(b"accept-encoding", b"gzip, deflate")] if gzip_ok else []
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode(), "headers": headers,
             "scheme": "http", "server": ("127.0.0.1", 8501), "root_path": ""}

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def test_a_poll_with_nothing_new_is_held_until_a_state_comes(monkeypatch):
    """The route holds a poll that would bring nothing until the run has news (or HOLD s pass): the chart then
    asks about as often as there is news, and gets a new state as soon as it is built."""
    import gzip as gz

    run, gate = gated_run()
    gate.step(run, 3)
    url = feed.publish(run, states_payload())
    _, first, _ = poll(url)
    query = f"after=2&layout={first['layout_id']}"
    lane = feed.FastLane(lambda scope, receive, send: pytest.fail("passed on"))

    t0 = time.perf_counter()
    status, _, body = asgi_get(lane, url, query)
    waited = time.perf_counter() - t0
    assert status == 200 and json.loads(body)["states"] == [] and waited >= feed.HOLD * 0.9  # nothing came

    threading.Timer(0.15, gate.step, (run, 1)).start()
    t0 = time.perf_counter()
    status, _, body = asgi_get(lane, url, query)
    waited = time.perf_counter() - t0
    assert [s["seq"] for s in json.loads(body)["states"]] == [3]  # held, then answered with the news
    assert 0.1 < waited < feed.HOLD  # before the hold ran out (how much before is the machine's business)

    status, headers, body = asgi_get(lane, url, gzip_ok=True)  # the whole payload: long, so compressed
    assert headers.get("content-encoding") == "gzip" and len(body) == int(headers["content-length"])
    assert json.loads(gz.decompress(body))["run"] == run.run_id
    run.stop()


def test_a_run_s_payload_is_built_at_most_every_build_every_for_new_states_and_its_end_at_once(monkeypatch):
    monkeypatch.setattr(feed, "BUILD_EVERY", 0.3)
    builds: list[int] = []
    run, gate = gated_run()
    gate.step(run, 2)
    url = feed.publish(run, states_payload(builds))
    poll(url)
    for _ in range(5):  # five new states at once: the build made a moment ago stands until BUILD_EVERY
        gate.step(run, 1)
        poll(url, after=0)
    assert len(builds) == 1
    time.sleep(0.3)
    _, body, _ = poll(url, after=1)
    assert len(builds) == 2 and [s["seq"] for s in body["states"]][-1] == 6  # then all of them at once
    gate.step(run, 1)
    run.stop()
    _, body, _ = poll(url, after=6)
    assert body["status"] == "stopped" and len(builds) == 3  # the end is never held back


def test_the_fast_lane_passes_on_every_other_request():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    lane = feed.FastLane(app)
    for path in ("/", "/logistic", "/api/live/", "/api/live/a/b", "/_stcore/health", "/api/liveX"):
        assert asgi_get(lane, path)[0] == 204
    assert seen == ["/", "/logistic", "/api/live/", "/api/live/a/b", "/_stcore/health", "/api/liveX"]
    status, _, body = asgi_get(lane, "/api/live/no-such-token")
    assert status == 404 and json.loads(body)["gone"] and len(seen) == 6  # answered by the feed itself


def test_the_budget_reads_what_a_config_says_it_needs_and_refuses_a_config_that_says_nothing():
    """``estimate`` recognises no lesson: a config's own ``footprint()`` is the cost, and a config without one
    is an error (it was once admitted as 1 MiB and no time, whatever it ran)."""
    from dataclasses import dataclass

    from autodiff_core.footprint import Footprint

    @dataclass(frozen=True)
    class Counted:
        dtype: str = "float64"

        def footprint(self) -> Footprint:
            return Footprint(numbers=1000, flops=0.0, fixed_bytes=10, fixed_seconds=0.25, hint="Fewer.")

    cost = budget.estimate(Counted())
    assert (cost.memory, cost.step_seconds, cost.hint) == (8 * 1000 + 10, 0.25, "Fewer.")

    class Silent:
        pass

    with pytest.raises(TypeError, match="footprint"):
        budget.estimate(Silent())
