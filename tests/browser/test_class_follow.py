"""Following the teacher in headless Chromium: a student who joined sees the teacher's lesson, settings and live
run paint on their own screen, moves when the teacher moves, and gets their own Train back with "Try it
yourself"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from testkit.browser import exception_boxes, open_page, set_number, set_speed, wait_idle
from tests.browser.test_class_room import PROJECTOR, join, start_class

pytestmark = pytest.mark.browser


def _live(page, what: str):
    return page.evaluate(f"() => document.querySelector('.studio-live')?.dataset.{what} ?? null")


def test_a_student_follows_the_teacher_s_live_run(server, browser):
    teacher = open_page(browser.new_context(viewport=PROJECTOR), server)
    code = start_class(teacher)
    teacher.goto(f"{server}/logistic")
    wait_idle(teacher)
    expect(teacher.locator('[data-testid="stSidebar"]')).to_contain_text(f"Teaching class {code}")
    set_number(teacher, "Learning rate", 0.05)
    set_number(teacher, "Max iterations", 400)
    set_number(teacher, "Stop at accuracy >", 1.0)  # never reached: the run goes on for all 400 iterations

    student = open_page(browser.new_context(viewport={"width": 390, "height": 844}), f"{server}/?join={code}")
    join(student, "Ada")
    expect(student.get_by_text("Following the teacher")).to_be_visible()
    assert "/logistic" in student.url
    expect(student.get_by_label("Learning rate", exact=True)).to_have_value("0.05")
    expect(student.get_by_role("button", name="Train")).to_have_count(0)

    set_speed(teacher, "100")  # 100 iterations a second: the run lasts a few seconds
    teacher.get_by_role("button", name="Train").click()
    teacher.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'running'",
                              timeout=30_000)
    run = _live(teacher, "run")
    # No click on the student's page: its watch reruns it when the run starts, and its chart reads the relay.
    student.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 100",
                              timeout=30_000)
    assert _live(student, "run") == run  # the teacher's run, not one of the student's
    before = int(_live(student, "painted"))
    student.wait_for_function(f"() => Number(document.querySelector('.studio-live')?.dataset.painted) > {before}",
                              timeout=30_000)  # it keeps painting while the run goes
    student.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'done'",
                              timeout=60_000)
    assert exception_boxes(student) == 0 and exception_boxes(teacher) == 0

    teacher.goto(f"{server}/two_layer")  # the teacher moves on; the student's page follows by itself
    wait_idle(teacher)
    student.wait_for_url("**/two_layer*", timeout=30_000)
    wait_idle(student)
    student.get_by_role("button", name="Try it yourself").click()
    wait_idle(student)
    expect(student.get_by_role("button", name="Train")).to_be_visible()
    expect(student.get_by_role("button", name="Follow the teacher")).to_be_visible()
    assert exception_boxes(student) == 0
