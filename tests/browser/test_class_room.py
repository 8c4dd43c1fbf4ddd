"""A class in headless Chromium: the teacher starts one and shows its code; one student joins by the link,
another by typing the code. The teacher's join screen is saved as docs/class-join.png (the README shows it)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from testkit.browser import ROOT, exception_boxes, open_page, wait_idle

pytestmark = pytest.mark.browser
PROJECTOR = {"width": 1280, "height": 720}


def start_class(page) -> str:
    page.get_by_role("button", name="Start a class").click()
    wait_idle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_contain_text("Teaching class")
    return re.search(r"Teaching class ([A-Z0-9]{5})", sidebar.inner_text()).group(1)


def join(page, name: str) -> None:
    page.get_by_label("Nickname (or leave it empty)").fill(name)
    page.get_by_role("button", name="Join", exact=True).click()
    wait_idle(page)


def test_a_teacher_starts_a_class_and_two_students_join(server, browser):
    teacher = open_page(browser.new_context(viewport=PROJECTOR), server)
    code = start_class(teacher)
    qr = teacher.locator('[data-testid="stImage"] img').first
    expect(qr).to_be_visible()
    assert teacher.evaluate("img => img.naturalWidth", qr.element_handle()) > 100  # drawn by the server, offline
    teacher.get_by_role("button", name="Show the join code").click()
    dialog = teacher.get_by_role("dialog")
    expect(dialog).to_contain_text(code)
    expect(dialog).to_contain_text(f"/?join={code}")
    size = dialog.get_by_text(code, exact=True).evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 64  # read from the back of the room
    box = dialog.locator("img").bounding_box()
    assert box["width"] >= 250 and box["y"] + box["height"] <= PROJECTOR["height"]  # the QR code fits the screen
    teacher.screenshot(path=str(ROOT / "docs" / "class-join.png"))

    by_link = open_page(browser.new_context(viewport={"width": 390, "height": 844}), f"{server}/?join={code}")
    expect(by_link.get_by_label("Class code")).to_have_value(code)
    join(by_link, "Ada")
    by_code = open_page(browser.new_context(), server)
    by_code.get_by_label("Class code").fill(code.lower())
    join(by_code, "")
    for page, shown in ((by_link, "Ada"), (by_code, "Student 2")):
        expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(f"In class {code} as {shown}")
        assert exception_boxes(page) == 0
    assert exception_boxes(teacher) == 0

    # A reload is a new session: the teacher is still the teacher, each student still in the class.
    for page, says in ((teacher, f"Teaching class {code}"), (by_link, f"In class {code} as Ada"),
                       (by_code, f"In class {code} as Student 2")):
        page.reload()
        wait_idle(page)
        expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(says)
    assert "?join" not in by_link.url
    cookies = {c["name"]: c["value"] for c in teacher.context.cookies()}
    assert cookies["studio_teacher"].startswith(code + ".")  # the key is in the teacher's browser only
    assert "studio_teacher" not in {c["name"] for c in by_link.context.cookies()}
    teacher.get_by_role("button", name="End the class").click()
    wait_idle(teacher)
    teacher.reload()
    wait_idle(teacher)
    expect(teacher.get_by_role("button", name="Start a class")).to_be_visible()
    by_code.reload()
    wait_idle(by_code)
    expect(by_code.get_by_label("Class code")).to_be_visible()  # the class ended: join another


def test_a_wrong_code_says_so(server, browser):
    page = open_page(browser.new_context(), server)
    page.get_by_label("Class code").fill("ZZZZZ")
    join(page, "x")
    expect(page.get_by_text("There is no class with that code")).to_be_visible()
