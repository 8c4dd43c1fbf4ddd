"""What a class costs the server's memory and its one GIL: once it has gone, the feed's idle threads are
ended (each kept its stack), and the reaper asks for that when it collects the closed sessions' objects;
the imports are frozen out of the garbage collector's reach, so a collection no longer stalls every run."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import weakref

import pytest
from starlette.concurrency import run_in_threadpool

from studio import boot, reaper, server_loop


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "AnyIO worker thread"]


def test_idle_feed_threads_end_once_the_class_has_gone(monkeypatch):
    """The server's event loop in a thread; a class's feed requests leave a pool of idle threads, which
    AnyIO would keep until the next request; prune_idle_threads ends all but one."""
    loop, ready, done = asyncio.new_event_loop(), threading.Event(), asyncio.Event()

    async def serve() -> None:  # as uvicorn: one long task the server's requests run beside
        ready.set()
        await done.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    ready.wait(5)
    before = len(workers())
    gate = threading.Barrier(8)

    async def class_polls() -> None:  # eight requests at once need eight threads
        await asyncio.gather(*(run_in_threadpool(gate.wait, 5) for _ in range(8)))

    try:
        asyncio.run_coroutine_threadsafe(class_polls(), loop).result(10)
        assert len(workers()) - before == 8
        for worker in workers():  # as if the class had left AnyIO's 10 s ago
            worker.idle_since -= 60
        monkeypatch.setattr(server_loop, "_loop", loop)
        assert server_loop.prune_idle_threads()
        deadline = time.monotonic() + 5
        while len(workers()) - before > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(workers()) - before == 1
    finally:
        loop.call_soon_threadsafe(done.set)
        thread.join(5)


def test_no_server_loop_nothing_to_prune(monkeypatch):
    monkeypatch.setattr(server_loop, "_loop", None)
    assert server_loop.prune_idle_threads() is False


def test_the_reaper_prunes_threads_when_it_collects_a_closed_class(monkeypatch):
    calls = []
    monkeypatch.setattr(server_loop, "prune_idle_threads", lambda: calls.append("prune") or True)
    monkeypatch.setattr(reaper, "trim_heap", lambda: calls.append("trim"))
    monkeypatch.setattr(reaper, "_collect_due", True)
    monkeypatch.setattr(reaper, "_last_collect", 0.0)
    monkeypatch.setattr(reaper, "_live", type(reaper._live)())
    reaper.reap(now=time.monotonic() + 100)
    assert calls == ["prune", "trim"]


def test_the_imports_are_frozen_out_of_the_collectors_reach():
    """A full collection walked every object of torch, plotly and Streamlit (0.3-0.5 s of the GIL);
    frozen, a collection walks only what came after them."""
    try:
        frozen = boot.freeze_imports()
        assert frozen > 10_000 and gc.get_freeze_count() == frozen  # the imports: torch alone holds more
        garbage = []
        garbage.append(garbage)  # a cycle made after the freeze is still collected
        ref = weakref.ref(Cycle(garbage))
        del garbage
        gc.collect()
        assert ref() is None
    finally:
        gc.unfreeze()


def test_an_import_runs_with_the_collector_paused_and_is_frozen_after():
    """torch's import set off three or four full collections (0.3 s of the GIL) while the first page waited, and
    the server's event loop waited up to 5 ms for the GIL at each step of serving the browser's files."""
    paused, before, switch = [], gc.get_freeze_count(), sys.getswitchinterval()
    try:
        with boot.importing():
            paused.append(not gc.isenabled())
            paused.append(sys.getswitchinterval() == boot.IMPORT_SWITCH < switch)  # the server's loop gets the GIL
            made = [[i] for i in range(1000)]  # what an import makes, and keeps
        assert paused == [True, True] and gc.isenabled() and sys.getswitchinterval() == switch
        assert gc.get_freeze_count() >= before + len(made)
        gc.unfreeze()
        with pytest.raises(ImportError), boot.importing():  # an import that fails: collection resumes all the same
            raise ImportError("no such module")
        assert gc.isenabled() and gc.get_freeze_count() == 0
        gc.disable()  # paused already (by whoever runs this): it stays paused
        with boot.importing():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_imports_in_two_threads_take_turns_and_leave_the_collector_as_it_was():
    """The preload's and the warm-up's: overlapping, the one that began second would have restored the first's
    short switch interval for good."""
    switch, inside, order = sys.getswitchinterval(), threading.Event(), []

    def second():
        with boot.importing():
            order.append("second")

    try:
        with boot.importing():
            other = threading.Thread(target=second)
            other.start()
            inside.wait(0.2)  # time for the other thread to try
            order.append("first")
        other.join(5)
        assert order == ["first", "second"]
        assert sys.getswitchinterval() == switch and gc.isenabled()
    finally:
        gc.unfreeze()


class Cycle:
    def __init__(self, other) -> None:
        self.me, self.other = self, other


def test_a_server_freezes_after_its_warm_up_and_a_test_app_does_not(monkeypatch):
    calls = []
    monkeypatch.setattr(boot, "freeze_imports", lambda: calls.append("freeze") or 0)
    monkeypatch.setattr(boot, "_server_warm_up", lambda: calls.append("trainers and lesson 4"))
    monkeypatch.setattr(boot, "wait_quiet", lambda: True)
    monkeypatch.setattr(boot, "_started", {"warm-up"})  # AppTest: the script's warm_up, no server request
    boot._warm_up()
    assert calls == []
    monkeypatch.setattr(boot, "_started", {"preload", "warm-up"})  # a server: its first request preloaded
    boot._warm_up()
    assert calls == ["trainers and lesson 4", "freeze"]
