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


def test_train_reruns_only_the_run_s_section_and_stop_the_whole_page():
    """Train is drawn in the lesson's run section, a fragment (studio.live_view.train_section): its click, sent as
    the browser sends it (with the fragment's id), reruns that section alone, and the run starts; Stop reruns the
    whole page, which draws the stopped run's finished view."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def lesson(base: str):
        s = classroom.Student(base)
        await s.open("logistic")
        titles = len(s.titles)
        train_id, _ = s.widgets["Train"]
        await s.click("Train")
        started = (s.fragments[train_id], s.finished_as[-1], len(s.titles) - titles, s.chart.get("status"))
        await s.click("Stop")
        stopped = (s.finished_as[-1], len(s.titles) - titles)
        await s.close()
        return started, stopped

    with streamlit_server() as base:
        started, stopped = asyncio.run(lesson(base))
    fragment, finished, new_titles, status = started
    assert fragment and finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
    assert new_titles == 0 and status in ("starting", "running")  # the page's title was not drawn again
    assert stopped == (ForwardMsg.FINISHED_SUCCESSFULLY, 1)  # the whole page, its title included
