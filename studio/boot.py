"""Once-per-process setup for a shared classroom server, kept off the first page's path.

Two background threads, each started at most once per process:

* ``preload()``, on the server's first request (``PreloadOnFirstRequest``): imports torch and the
  engine, which every page needs (the sidebar lists torch's devices). Started any earlier, the import
  holds the GIL while the server is still starting and delays its health check by a second or more.
  A page that comes before it has finished waits only for the rest of that import, never a second one.
* ``warm_up()``, from the script once the first page has been drawn. In a server it imports pandas (Streamlit's
  check of a component's data for a dataframe imports it on a lesson's first visit) and computes lesson 4's
  comparison runs and panels at the default settings (``studio.xray_runs``), which made that lesson's first
  visit the slowest page (now its tabs', each drawn when it is opened), at once: each part begins when no page's
  script runs, and between steps the runs give way to any page's script run, unless that page waits for them
  (``giving_way``). Before them it makes a first ``torch.optim`` optimizer, which imports ``torch._dynamo``
  (about 800 modules, over a second holding the GIL) that lesson 4's first run and the first Train click would
  otherwise pay. Then, after a lull of
  ``QUIET_TRAINERS`` seconds without a script run (``wait_quiet``; 20 s at most), it starts the trainer
  processes, whose own torch import takes a core for over a second from the pages; the first run that wants
  one starts them sooner (``studio.trainers``). Outside a server (a test's AppTest) it makes that first
  optimizer after a quiet moment, and that is all.

Each import runs with the cyclic garbage collector paused, and what it loaded is frozen out of the collector's
reach after (``importing``); once the warm-up is done, in a server, garbage is collected and what is left frozen
too (``freeze_imports``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import sys
import threading
import time
from collections.abc import Callable

from . import server_loop

_started: set[str] = set()
_lock = threading.Lock()


def _once(name: str, target) -> bool:
    """Run ``target`` in a daemon thread, unless ``name`` has been started before; True if started now."""
    with _lock:
        if name in _started:
            return False
        _started.add(name)
    threading.Thread(target=target, name=f"studio-{name}", daemon=True).start()
    return True


def _single_threaded_torch():
    import torch

    # OpenMP threads spin on a shared 2-core server: one thread per run is faster overall. The setting
    # is the calling thread's (and MKL's): a run's thread makes it again (studio.runner).
    torch.set_num_threads(1)
    return torch


# What every page's script run imports first (app.py's own imports): loaded with the engine, while the browser loads
# Streamlit, so that the first page's run does not (0.3 s here once torch is in).
SHELL = ("studio.lessons", "studio.offline_notice", "studio.page", "studio.presenter", "studio.room.board",
         "studio.room.follow", "studio.session_functions", "studio.sidebar", "studio.state", "studio.room.panel")


def _preload() -> None:
    import importlib

    with importing():
        _single_threaded_torch()
        import autodiff_core  # noqa: F401

        for name in SHELL:
            importlib.import_module(name)


@contextlib.contextmanager
def importing():
    """For the imports inside: no automatic cyclic garbage collection while they run, and what they loaded out of
    the collector's reach after (``gc.freeze()``, without a collection first: that would take 0.1-0.5 s holding the
    GIL, while a page runs). An import makes hundreds of thousands of objects, all of which stay; each full
    collection they set off walked them all again: three or four during torch's import (0.3 s, while the browser
    loads the first page and its script run waits), one of 0.3-0.5 s during a lesson's first visit after pandas'
    and torch.optim's. Collection resumes as it was after. The cyclic garbage of that moment is frozen too, and
    never collected: a few thousand objects, once.

    Meanwhile another thread that wants the GIL gets it within ``IMPORT_SWITCH`` seconds, not Python's 5 ms: the
    server's event loop, serving the browser the files of the first page while torch is imported, waited up to
    5 ms for it at every step of every file, and the page's files came a few hundred ms later."""
    with _importing:  # one at a time (the preload's and the warm-up's): each restores what it found
        was, switch = gc.isenabled(), sys.getswitchinterval()
        gc.disable()
        sys.setswitchinterval(min(switch, IMPORT_SWITCH))
        try:
            yield
            gc.freeze()
        finally:
            sys.setswitchinterval(switch)
            if was:
                gc.enable()


_importing = threading.RLock()


IMPORT_SWITCH = 0.0005  # seconds: the GIL's switch interval while the warm-up imports


def _warm_up() -> None:
    _single_threaded_torch()
    if "preload" in _started:  # a server (not a test's AppTest)
        _server_warm_up()
        freeze_imports()  # its imports are done now
    else:
        wait_quiet()
        first_optimizer()


def first_optimizer() -> None:
    """Make a torch.optim optimizer, as a lesson's first run would: the first one imports torch._dynamo."""
    torch = _single_threaded_torch()
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)


def _server_warm_up() -> None:
    from autodiff_core.stopping import give_way_while

    from . import xray_runs
    from .assets import plotly_js_gzip
    from .trainers import TRAINERS

    # Nothing until the browser has had time to draw the first page: after its script run, it still asks for the
    # code of the page's widgets and draws them (0.2-0.4 s here).
    wait_quiet(quiet=DRAWN)
    # plotly.js for the live charts, compressed once, after the first page: 0.14 s of a core that the first page's
    # browser wanted (a lesson that asks for it sooner has it compressed in one of the server's worker threads)
    plotly_js_gzip()
    # What Streamlit imports the first time a page passes a component (a live chart) or a table anything but plain
    # values, to check it for a dataframe: 0.4 s holding the GIL, which the first lesson visited would pay
    wait_quiet(quiet=0.0)
    with importing():
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401

    TRAINERS.on_demand = True  # a run that wants a trainer before the lull starts them
    # What torch imports for its first optimizer (torch._dynamo: about 800 modules, over a second holding the GIL),
    # which lesson 4's first run and the first Train click would otherwise pay
    wait_quiet(quiet=0.0)
    with importing():
        first_optimizer()
    # Lesson 4's runs at once, between the pages opened meanwhile: between steps they wait while a page's script
    # runs, unless that page waits for them.
    give_way_while(giving_way(lambda: not xray_runs.someone_waits()))
    try:
        xray_runs.warm(before_each=lambda: wait_quiet(quiet=0.0))
    finally:
        give_way_while(None)
    wait_quiet(quiet=QUIET_TRAINERS)
    TRAINERS.start()  # they import and warm up in processes of their own; runs train here until they are ready


QUIET = 1.0  # seconds with no script run before the warm-up's next part
DRAWN = 0.4  # seconds after a page's script run by which its browser has drawn it, here
QUIET_TRAINERS = 3.0  # before the trainers start: their torch import takes a core for over a second
QUIET_AT_MOST = 20.0  # and the longest it waits for them: a busy class still gets its trainers
LONG_RUN = 10.0  # a script run that began longer ago than this and has not ended no longer holds it back
_scripts = {"began": 0.0, "ended": 0.0}  # time.monotonic() of the latest script run's start and end


def script_began() -> None:
    """A page's script run has begun (app.py calls this first)."""
    _scripts["began"] = time.monotonic()


def script_ended() -> None:
    """A page's script run has ended (app.py calls this last, also when the page ended early)."""
    _scripts["ended"] = time.monotonic()


def wait_quiet(quiet: float = QUIET, at_most: float = QUIET_AT_MOST) -> bool:
    """Wait until no script run has begun or ended for ``quiet`` seconds, and none is going; at most ``at_most``
    seconds. True when it is quiet."""
    deadline = time.monotonic() + at_most
    while (now := time.monotonic()) < deadline:
        began, ended = _scripts["began"], _scripts["ended"]
        going = began > ended and now - began < LONG_RUN
        if not going and now - max(began, ended) >= quiet:
            return True
        # a look every 50 ms while a run goes (never a busy loop: quiet may be 0), else when the lull would end
        time.sleep(min(0.05 if going else max(0.005, quiet - (now - max(began, ended))), deadline - now))
    return False


def script_going() -> bool:
    """Whether a page's script run is going (one that began more than ``LONG_RUN`` seconds ago does not count)."""
    began, ended = _scripts["began"], _scripts["ended"]
    return began > ended and time.monotonic() - began < LONG_RUN


def giving_way(may: Callable[[], bool] = lambda: True, at_most: float = QUIET_AT_MOST) -> Callable[[], bool]:
    """A ``busy()`` for ``autodiff_core.stopping.give_way_while``: true while a page's script runs and ``may()``
    is, for at most ``at_most`` seconds in all (a busy class still gets what the warm-up computes)."""
    from autodiff_core.stopping import GIVE_WAY  # not at the top: the server imports this module before torch

    left = [at_most]

    def busy() -> bool:
        if left[0] <= 0 or not script_going() or not may():
            return False
        left[0] -= GIVE_WAY
        return True

    return busy


def freeze_imports() -> int:
    """Move every object the process holds now (the imported modules: torch, plotly, Streamlit, the
    engine) out of reach of the cyclic garbage collector (``gc.freeze``); returns how many it holds.

    With them loaded, one full collection walks about 340,000 objects and holds the GIL for 0.3-0.5 s:
    every live feed and every run waits. Python starts one by itself from time to time while a class
    allocates, and ``studio.reaper.reap`` starts one to free closed sessions. Frozen, those walk only
    what came after (sessions, runs). Garbage is collected first, so none is frozen; objects of a
    session open at that moment are never collected (the first page's, once)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def preload() -> bool:
    """Start importing torch and the engine in the background (the server calls this as it starts)."""
    limit_malloc_arenas()
    return _once("preload", _preload)


M_ARENA_MAX = -8  # glibc's mallopt() parameter number (malloc.h)
MALLOC_ARENAS = 2


def limit_malloc_arenas(n: int = MALLOC_ARENAS) -> bool:
    """At most ``n`` glibc malloc arenas for the whole process, unless ``MALLOC_ARENA_MAX`` says otherwise.

    glibc gives threads that allocate at the same moment arenas of their own, up to 8 per core. A class
    of 30 runs script threads and training threads by the dozen; what they freed stayed in those arenas,
    scattered, so the server's memory stayed up long after every session had closed (bench/classroom.py
    --warm). Every Python thread shares one GIL, so more arenas buy little speed. Called before the
    server's threads allocate much (its first request); arenas already made stay. True when set."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, n))
    except (OSError, AttributeError):  # not glibc
        return False


def warm_up() -> bool:
    """Start the rest of the warm-up in the background, after the first page (the script calls this)."""
    return _once("warm-up", _warm_up)


class PreloadOnFirstRequest:
    """ASGI middleware for ``st.App``: the server's first request (a health check, or the browser opening
    the app) starts ``preload()`` and notes the server's event loop; every request passes through unchanged."""

    def __init__(self, app) -> None:
        self.app = app
        self.started = False

    async def __call__(self, scope, receive, send) -> None:
        if not self.started and scope["type"] in ("http", "websocket"):
            self.started = True
            server_loop.remember(asyncio.get_running_loop())
            preload()
        await self.app(scope, receive, send)
