"""gradcheck's verdict as every lesson shows it (lesson 1's Function, the X-ray's gradcheck lab)."""

from __future__ import annotations

import streamlit as st

from autodiff_core.gradcheck import GradcheckReport


def show_gradcheck(report: GradcheckReport) -> None:
    """Passed, failed, or (for a backward we know is broken) why gradcheck could not see the bug at these
    points; the dtype it ran in is named, since float32 can fool it."""
    if report.missed:
        st.warning(report.missed)
    elif report.passed:
        st.success(f"gradcheck passed ({report.dtype}): {report.message}")
    else:
        st.error(f"gradcheck failed ({report.dtype}): {report.message}")
