"""A small class on one real server (bench/classroom.py's students, N = 10): every page opens, every
run finishes and is followed on its live feed to the end, and nothing fails. No times are asserted:
bench/classroom.py prints them."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from testkit.browser import streamlit_server

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("classroom", ROOT / "bench" / "classroom.py")
classroom = sys.modules.setdefault("classroom", importlib.util.module_from_spec(spec))
spec.loader.exec_module(classroom)

pytestmark = pytest.mark.browser  # a real server, like the browser tests (no browser, though)


def test_ten_students_open_train_and_follow_their_runs_to_the_end():
    async def lesson(base: str):
        students, _ = await classroom.class_opens(base, 10, "logistic")
        for s in students:
            await s.set_speed("max")
        times, _ = await classroom.train_all(students)
        await asyncio.gather(*(s.close() for s in students))
        return students, times

    with streamlit_server() as base:
        students, times = asyncio.run(lesson(base))
    assert [e for s in students for e in s.errors] == []
    assert all(not s.exceptions for s in students)
    assert all(t == t for t in times)  # not NaN: each run ended and its page learnt it from the feed
    assert all(s.polls > 0 for s in students)  # every page had its feed address and read it
    assert [s.final for s in students] == ["done"] * 10
