"""A whole class lesson in headless Chromium, one teacher and two students: one joins by the link, the other by
the code; the teacher asks the class a question; both follow the teacher's lesson-3 run on their own screens; one
forks it mid-run and trains; both send their runs and the board shows both; the answers' histogram shows beside
what happened; a student reloads and gets their class, run and lesson-6 code back. Screens are saved as
docs/class-follow.png (a student's phone while following) and docs/class-board.png (the teacher's board)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from studio.room.questions import CHOICE_TEXT
from testkit.browser import ROOT, exception_boxes, open_expander, open_page, set_number, set_speed, wait_idle

from .test_class_room import PROJECTOR, join, start_class
from .test_logistic import train_to_replay
from .test_write_function import EDITOR, RELU, type_code, verdict

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def live(page, what: str):
    return page.evaluate(f"() => document.querySelector('.studio-live')?.dataset.{what} ?? null")


def painted_at_least(page, step: int) -> None:
    page.wait_for_function(f"() => Number(document.querySelector('.studio-live')?.dataset.painted) >= {step}",
                           timeout=30_000)


def test_a_class_follows_forks_sends_predicts_and_reloads(server, browser):
    teacher = open_page(browser.new_context(viewport=PROJECTOR), server)
    code = start_class(teacher)
    teacher.goto(f"{server}/logistic")
    wait_idle(teacher)
    set_number(teacher, "Max iterations", 500)
    set_number(teacher, "Stop at accuracy >", 1.0)  # never reached: the run goes on for all 500 iterations
    set_speed(teacher, "20")  # 25 s: still going when Bo forks it, however slowly a loaded machine paints

    ada = open_page(browser.new_context(viewport=PHONE), f"{server}/?join={code}")  # by the link
    join(ada, "Ada")
    bo = open_page(browser.new_context(), server)  # by the code
    bo.get_by_label("Class code").fill(code)
    join(bo, "Bo")
    for student in (ada, bo):
        expect(student.get_by_text("Following the teacher")).to_be_visible()
        assert "/logistic" in student.url

    open_expander(teacher, "Ask the class before you train")
    teacher.get_by_role("button", name="Ask", exact=True).click()
    wait_idle(teacher)
    expect(teacher.get_by_text(f"You asked the class: {CHOICE_TEXT}")).to_be_visible(timeout=30_000)  # asked
    expect(ada.get_by_text(f"Your teacher asks: {CHOICE_TEXT}")).to_be_visible(timeout=30_000)  # no reload
    ada.get_by_text("The loss goes down", exact=True).click()
    wait_idle(ada)
    ada.get_by_role("button", name="Send", exact=True).click()
    wait_idle(ada)
    expect(teacher.get_by_text("1 answered.")).to_be_visible(timeout=30_000)  # the teacher's page, live

    teacher.get_by_role("button", name="Train").click()
    teacher.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'running'",
                              timeout=30_000)
    run = live(teacher, "run")
    for student in (ada, bo):  # each student's chart paints the teacher's run, iteration by iteration
        painted_at_least(student, 60)
        assert live(student, "run") == run
    painted_at_least(ada, 150)  # the boundary has moved: a picture worth the README
    ada.locator(".studio-live").evaluate("e => e.scrollIntoView({block: 'end'})")
    ada.screenshot(path=str(ROOT / "docs" / "class-follow.png"))

    bo.get_by_role("button", name="Try it yourself").click()  # mid-run: Bo goes on from the teacher's iteration
    wait_idle(bo)
    expect(bo.get_by_text(re.compile(r"Train goes on from the teacher's iteration [0-9,]+"))).to_be_visible()
    train_to_replay(bo)
    bo.get_by_role("button", name="Send to class").click()
    wait_idle(bo)
    expect(bo.get_by_text("Sent to the class board.")).to_be_visible()

    ada.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'done'", timeout=60_000)
    expect(ada.get_by_text(re.compile(r"What happened:.*The loss went down"))).to_be_visible(timeout=30_000)
    expect(teacher.get_by_text(re.compile(r"1 of 1 predicted"))).to_be_visible(timeout=30_000)
    ada.get_by_role("button", name="Try it yourself").click()
    wait_idle(ada)
    set_number(ada, "Learning rate", 0.05)  # her own idea: the board shows it beside Bo's
    train_to_replay(ada)
    ada.get_by_role("button", name="Send to class").click()
    wait_idle(ada)
    expect(ada.get_by_text("Sent to the class board.")).to_be_visible()

    teacher.goto(f"{server}/board")
    wait_idle(teacher)
    expect(teacher.get_by_text("2 runs sent by 2 students.").first).to_be_visible()
    expect(teacher.locator('[data-testid="stPlotlyChart"] .scatterlayer .point')).to_have_count(2)
    wait_idle(teacher)
    teacher.get_by_text("2 runs sent by 2 students.").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    teacher.screenshot(path=str(ROOT / "docs" / "class-board.png"))

    bo.goto(f"{server}/write_function")
    wait_idle(bo)
    bo.frame_locator(EDITOR).locator(".ace_content").wait_for(timeout=30_000)
    type_code(bo, RELU + "\n# Bo's own line\n")  # Apply checks it, and a checked code is kept for the reload
    verdict(bo, "gradcheck passed")  # the check's run has ended: what Bo sees before he reloads
    bo.reload()  # a new session: back in the class, with the code and the run
    wait_idle(bo)
    expect(bo.locator('[data-testid="stSidebar"]')).to_contain_text(f"In class {code} as Bo")
    assert "/write_function" in bo.url  # reloaded away from the teacher's lesson: Bo works on his own
    expect(bo.frame_locator(EDITOR).locator(".ace_content")).to_contain_text("# Bo's own line", timeout=30_000)
    bo.goto(f"{server}/logistic")
    wait_idle(bo)
    expect(bo.get_by_text("Your last run, kept by the class: the reload brought it back.")).to_be_visible()
    for page in (teacher, ada, bo):
        assert exception_boxes(page) == 0
