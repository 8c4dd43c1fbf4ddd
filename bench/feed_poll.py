"""What one live-feed poll costs the server, in this process (no HTTP, no other load): the handler's
time and the bytes it returns, plain and gzip-compressed, for lesson 3's payload at the default and at
the largest sizes. Three kinds of poll: the whole payload built and encoded (what every poll cost before),
a poll that brings one new state (a typical one while a paced run goes), and a poll with nothing new.
Timings are of the handler alone; Streamlit's gzip middleware compresses the larger answers.

    python bench/feed_poll.py
"""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from starlette.requests import Request  # noqa: E402

from autodiff_core import LogisticConfig, train_logistic  # noqa: E402
from autodiff_core.figures import logistic_live_payload  # noqa: E402
from autodiff_core.logistic import logistic_data  # noqa: E402
from studio import feed  # noqa: E402
from studio.runner import LiveRun  # noqa: E402


def request(token: str, query: str) -> Request:
    [route] = feed.ROUTES
    _, scope = route.matches({"type": "http", "path": feed.PREFIX + token, "method": "GET", "headers": []})
    return Request({"type": "http", "method": "GET", "headers": [], "query_string": query.encode(), **scope})


def timed(token: str, query: str, repeat: int) -> tuple[float, int, int]:
    """(ms per call, bytes, gzip bytes) of the feed's handler."""
    body = feed.live(request(token, query)).body
    t0 = time.perf_counter()
    for _ in range(repeat):
        feed.live(request(token, query))
    return (time.perf_counter() - t0) / repeat * 1e3, len(body), len(gzip.compress(body, 6))


def case(n_per_class: int, record_every: int) -> None:
    config = LogisticConfig(n_per_class=n_per_class, record_every=record_every, max_iterations=400, stop_accuracy=1.0)
    x, y = (t.numpy() for t in logistic_data(config))
    snaps = list(train_logistic(config))
    run = LiveRun("logistic", config, lambda: iter(()), lambda s: s.iteration)
    run.status = "running"

    def payload(r: LiveRun) -> dict:
        kept, _ = r.view()
        return logistic_live_payload(kept, x, y, run_id=r.run_id, status=r.status, status_text="Training…",
                                     max_iterations=config.max_iterations)

    feed.publish(run, payload)
    run.snapshots, run.count = snaps[:-1], len(snaps) - 1
    # every poll before: the payload built and encoded whole, each time
    t0 = time.perf_counter()
    for _ in range(20):
        body = feed._dumps(payload(run))
    whole = ((time.perf_counter() - t0) / 20 * 1e3, len(body), len(gzip.compress(body, 6)))
    timed(run.token, "", 1)
    built = run.feed_cache.built
    last, layout = built.newest, built.layout_id
    every, feed.STATUS_EVERY = feed.STATUS_EVERY, 1e9  # (the status line's clock rebuilds twice a second)
    idle = timed(run.token, f"after={last}&layout={layout}", 2000)
    feed.STATUS_EVERY = every
    # one new state: each round adds a snapshot, then one poll builds and answers (the build included)
    t0, size = time.perf_counter(), 0
    rounds = min(30, len(snaps) - 3)
    for i in range(rounds):
        run.snapshots = snaps[: len(snaps) - rounds + i]
        run.count = len(run.snapshots)
        after = run.snapshots[-2].iteration
        body = feed.live(request(run.token, f"after={after}&layout={layout}")).body
        size = len(body)
    one_new = (time.perf_counter() - t0) / rounds * 1e3
    print(f"lesson 3, {n_per_class:,} points per class, a state every {record_every} iteration(s), "
          f"{len(snaps) - 1} states kept:")
    packed = len(gzip.compress(body, 6))
    print(f"  whole payload (every poll before): {whole[0]:.2f} ms, {whole[1] / 1e3:.1f} KB "
          f"({whole[2] / 1e3:.1f} KB gzip)")
    print(f"  one new state (build included):    {one_new:.2f} ms, {size / 1e3:.2f} KB ({packed / 1e3:.2f} KB gzip)")
    print(f"  nothing new:                       {idle[0] * 1e3:.0f} µs, {idle[1]} bytes")


if __name__ == "__main__":
    case(100, 20)
    case(100, 1)
    case(5000, 1)
