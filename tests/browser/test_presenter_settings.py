"""Presenter view at 1280x720: choosing a preset in "Settings and presets" folds the box again, so the chart
comes back up under the controls (the teacher picked what to show; the class should see it, not the widgets).
The box stays open for any other setting, which the teacher may be adjusting one after another."""

from __future__ import annotations

import pytest

from testkit.browser import open_page, wait_idle

pytestmark = pytest.mark.browser


def box_open(page) -> bool:
    details = page.locator('[data-testid="stExpander"] details').filter(has_text="Settings and presets")
    return details.evaluate("(d) => d.open")


def wait_folded(page) -> None:
    """The box closes as the rerun the preset started draws it (give it that long, no more)."""
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stExpander"] details')]
      .some((d) => d.textContent.includes('Settings and presets') && !d.open)""", timeout=15_000)


def choose_preset(page, name: str) -> None:
    page.get_by_role("combobox", name="Preset").click()
    page.get_by_role("option", name=name, exact=True).click()
    wait_idle(page)


def test_a_chosen_preset_folds_the_settings_box(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/logistic?present=1")
    assert not box_open(page)
    page.get_by_text("Settings and presets", exact=True).click()
    wait_idle(page)
    assert box_open(page)
    page.get_by_label("Momentum").fill("0.5")  # an ordinary setting: the box stays open for the next one
    page.get_by_label("Momentum").press("Enter")
    wait_idle(page)
    assert box_open(page)
    choose_preset(page, "Overlapping clusters")
    page.wait_for_function("() => new URL(location.href).searchParams.get('lr_mean') === '0.3'")
    wait_folded(page)
    page.get_by_text("Settings and presets", exact=True).click()  # and it opens again as before
    wait_idle(page)
    assert box_open(page) and page.get_by_label("Cluster mean (±)").input_value() == "0.30"
    context.close()
