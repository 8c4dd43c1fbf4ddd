"""Once-per-process setup for a shared classroom server."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import streamlit as st
import torch

STATIC = Path(__file__).resolve().parents[1] / "static"


@st.cache_resource(show_spinner=False)
def configure() -> bool:
    """Runs once per server process; every step here was measured to matter."""
    # OpenMP threads spin on a shared 2-core server: one thread per run is faster overall.
    torch.set_num_threads(1)
    # The first torch.optim.SGD imports ~800 modules (over a second, holding the GIL): pay it now.
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    install_plotly_js()
    return True


def install_plotly_js() -> Path:
    """Serve the plotly.js that the plotly package ships, from ./static (no CDN: classrooms go offline)."""
    import plotly

    source = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    target = STATIC / "plotly.min.js"
    if not target.exists() or not filecmp.cmp(source, target, shallow=True):
        STATIC.mkdir(exist_ok=True)
        shutil.copyfile(source, target)
    return target
