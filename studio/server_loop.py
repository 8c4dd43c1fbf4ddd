"""The server's event loop, noted on its first request (``studio.boot.PreloadOnFirstRequest``), and what is
done on it from other threads. A module of its own: the reaper uses it, and the warm-up (``studio.boot``)
imports lesson modules that import the reaper."""

from __future__ import annotations

import asyncio

_loop: asyncio.AbstractEventLoop | None = None  # the loop the server answers requests on


def remember(loop: asyncio.AbstractEventLoop) -> None:
    """The loop the server answers requests on (its first request's)."""
    global _loop
    _loop = loop


def prune_idle_threads() -> bool:
    """Let the server's pool of threads for plain (sync) routes, the live feed's, shrink back to one.

    AnyIO starts a thread for each request that finds none free, and ends a thread idle for 10 s only
    when the next such request comes: after a class of 30 had left, 19 idle threads kept their stacks
    (bench/classroom.py). One no-op request from here ends them. Called from any thread, once the class
    has gone quiet (``studio.reaper.reap``); True when asked."""
    loop = _loop
    if loop is None or loop.is_closed():
        return False

    async def one_request() -> None:  # as a sync route's request is run (Starlette, through AnyIO)
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(_nothing)

    asyncio.run_coroutine_threadsafe(one_request(), loop)
    return True


def _nothing() -> None:
    return None
