"""Predict, then run in headless Chromium: the teacher asks the class a question on lesson 3, a student answers
it on their own screen, and the teacher's page counts the answer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from studio.room.questions import CHOICE_TEXT
from testkit.browser import exception_boxes, open_expander, open_page, wait_idle

from .test_class_room import PROJECTOR, join, start_class

pytestmark = pytest.mark.browser


def test_the_teacher_asks_a_student_answers_the_teacher_sees_it(server, browser):
    teacher = open_page(browser.new_context(viewport=PROJECTOR), server)
    code = start_class(teacher)
    teacher.goto(f"{server}/logistic")
    wait_idle(teacher)
    open_expander(teacher, "Ask the class before you train")
    expect(teacher.get_by_label("Question")).to_have_value(CHOICE_TEXT)  # ready-made in a lesson with runs
    wait_idle(teacher)  # a click on a button that a run is redrawing can miss it
    teacher.get_by_role("button", name="Ask", exact=True).click()
    wait_idle(teacher)
    expect(teacher.get_by_text("0 answered.")).to_be_visible(timeout=30_000)  # a loaded machine: beyond 5 s

    ada = open_page(browser.new_context(viewport={"width": 390, "height": 844}), f"{server}/?join={code}")
    join(ada, "Ada")
    ada.goto(f"{server}/logistic")
    wait_idle(ada)
    expect(ada.get_by_text(f"Your teacher asks: {CHOICE_TEXT}")).to_be_visible()
    ada.get_by_text("It stalls", exact=True).click()
    wait_idle(ada)
    ada.get_by_role("button", name="Send", exact=True).click()
    wait_idle(ada)
    expect(ada.get_by_text("Your answer: It stalls. You can change it until the teacher's run starts.")).to_be_visible()

    expect(teacher.get_by_text("1 answered.")).to_be_visible(timeout=30_000)  # no reload: the class's watch
    assert exception_boxes(teacher) == 0 and exception_boxes(ada) == 0
