"""Objects one per server process (the registry of runs, the memory budget, the turns), kept when Streamlit
re-imports the app's modules."""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable


def process_wide(name: str, make: Callable[[], object]):
    """One object per server process, kept when Streamlit re-imports this package.

    Streamlit's file watcher unloads every watched module when any file of the app changes, and the
    next script run imports them afresh; the route registered at start-up keeps the old module. The
    registry of runs, the memory budget and the like must be the same object for both."""
    holder = sys.modules.get(_HOLDER)
    if holder is None:
        holder = sys.modules.setdefault(_HOLDER, types.ModuleType(_HOLDER))
    with _holder_lock:
        if not hasattr(holder, name):
            setattr(holder, name, make())
        return getattr(holder, name)


_HOLDER = "_autograd_studio_process_state"  # not importable, and no file: nothing watches or reloads it
_holder_lock = threading.Lock()
