"""Streamlit glue shared by the lesson pages: start-up, sidebar, live runner and live chart.

The engine (``autodiff_core``) knows nothing of Streamlit; everything UI-specific lives here.
"""

import os

# One thread a computation, as studio.boot sets it: set before torch loads OpenMP, so that every thread (a
# script run's, a run's) sums a matrix product in the same order, and a run gives the same last digit wherever
# it is computed (here, a trainer process, a sandboxed worker).
os.environ.setdefault("OMP_NUM_THREADS", "1")

