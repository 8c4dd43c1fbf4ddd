"""The class board in headless Chromium: a teacher starts a class, a student joins with the code, trains lesson 3
with small settings and presses Send to class; the teacher's Class board shows the run's point and its table row,
and a click on the point opens lesson 3 with that run's settings."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from autodiff_core import LogisticConfig, train_logistic
from testkit.browser import exception_boxes, open_page, plot_data, set_number, wait_idle
from tests.browser.test_class_room import PROJECTOR, join, start_class
from tests.browser.test_logistic import train_to_replay

pytestmark = pytest.mark.browser
LR, ITERS = 0.05, 30


def open_lesson(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title).click()
    wait_idle(page)


def test_a_student_sends_a_run_and_the_teacher_sees_it_on_the_board(server, browser):
    teacher = open_page(browser.new_context(viewport=PROJECTOR), server)
    code = start_class(teacher)
    student = open_page(browser.new_context(), f"{server}/?join={code}")
    join(student, "Ada")
    open_lesson(student, "3 · Logistic regression")
    set_number(student, "Learning rate", LR)
    set_number(student, "Max iterations", ITERS)
    train_to_replay(student)
    student.get_by_role("button", name="Send to class").click()
    wait_idle(student)
    expect(student.get_by_text("Sent to the class board.")).to_be_visible()
    assert exception_boxes(student) == 0

    open_lesson(teacher, "Class board")
    # the board's first visit: under load it once took over the 5 s an expect waits (a CI run)
    expect(teacher.get_by_text("1 run sent by 1 student.").first).to_be_visible(timeout=30_000)
    loss = list(train_logistic(LogisticConfig(learning_rate=LR, max_iterations=ITERS)))[-1].loss
    [points] = [t for t in plot_data(teacher) if t["x"]]
    assert points["x"] == [LR] and points["y"] == [pytest.approx(loss, rel=1e-5)]
    grid = teacher.locator('[data-testid="stDataFrame"]').first
    expect(grid).to_be_visible()
    row = grid.locator('tr[role="row"]', has_text="hidden")  # the grid's table for screen readers
    expect(row).to_have_count(1)
    cells = row.first.locator('td[role="gridcell"]').all_text_contents()
    assert cells[0] == "hidden" and float(cells[1]) == pytest.approx(loss, rel=1e-5)  # student, final loss
    assert exception_boxes(teacher) == 0

    # A click on the point: lesson 3 opens with that run's settings, for the teacher's next run.
    marker = teacher.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').first
    marker.hover(force=True)
    expect(teacher.locator('[data-testid="stPlotlyChart"] .hoverlayer')).to_contain_text("hidden")  # who sent it
    marker.click(force=True)
    wait_idle(teacher)
    expect(teacher.get_by_role("heading", name="3 · Logistic regression with an nn.Module")).to_be_visible()
    expect(teacher.get_by_label("Learning rate", exact=True)).to_have_value(str(LR))
    expect(teacher.get_by_label("Max iterations", exact=True)).to_have_value(str(ITERS))
    assert "lr_lr=0.05" in teacher.url

    # The presenter view of lesson 3 (a new session: the teacher's cookie keeps the class) folds the board in.
    teacher.goto(f"{server}/logistic?present=1")
    wait_idle(teacher)
    folded = teacher.get_by_text("Class board · 1 sent")
    expect(folded).to_be_visible(timeout=30_000)
    folded.click()
    expect(teacher.get_by_text(f"final loss {loss:.4g}")).to_be_visible()
    assert exception_boxes(teacher) == 0
