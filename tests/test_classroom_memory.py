"""What a class leaves behind on the server once it has gone: the feed's idle threads are ended (each kept
its stack), and the reaper asks for that when it collects a closed session's objects."""

from __future__ import annotations

import asyncio
import threading
import time

import anyio.to_thread
from anyio._backends._asyncio import WorkerThread

from studio import boot, runner


def workers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "AnyIO worker thread")


def test_idle_feed_threads_end_once_the_class_has_gone(monkeypatch):
    """The server's event loop in a thread; a class's feed requests leave a pool of idle threads, which
    AnyIO would keep until the next request; prune_idle_threads ends all but one."""
    monkeypatch.setattr(WorkerThread, "MAX_IDLE_TIME", 0.0)  # AnyIO's 10 s, so the test need not wait
    loop, ready, done = asyncio.new_event_loop(), threading.Event(), asyncio.Event()

    async def serve() -> None:  # as uvicorn: one long task the server's requests run beside
        ready.set()
        await done.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    ready.wait(5)
    before = workers()
    gate = threading.Barrier(8)

    async def class_polls() -> None:  # eight requests at once need eight threads
        await asyncio.gather(*(anyio.to_thread.run_sync(gate.wait, 5) for _ in range(8)))

    try:
        asyncio.run_coroutine_threadsafe(class_polls(), loop).result(10)
        assert workers() - before == 8
        monkeypatch.setattr(boot, "_server_loop", loop)
        assert boot.prune_idle_threads()
        deadline = time.monotonic() + 5
        while workers() - before > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert workers() - before == 1
    finally:
        loop.call_soon_threadsafe(done.set)
        thread.join(5)


def test_no_server_loop_nothing_to_prune(monkeypatch):
    monkeypatch.setattr(boot, "_server_loop", None)
    assert boot.prune_idle_threads() is False


def test_the_reaper_prunes_threads_when_it_collects_a_closed_class(monkeypatch):
    calls = []
    monkeypatch.setattr(boot, "prune_idle_threads", lambda: calls.append("prune") or True)
    monkeypatch.setattr(runner, "_trim_heap", lambda: calls.append("trim"))
    monkeypatch.setattr(runner, "_collect_due", True)
    monkeypatch.setattr(runner, "_last_collect", 0.0)
    monkeypatch.setattr(runner, "_live", type(runner._live)())
    runner.reap(now=time.monotonic() + 100)
    assert calls == ["prune", "trim"]
