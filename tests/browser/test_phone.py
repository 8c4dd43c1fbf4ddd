"""On a 390x844 phone: what a student needs is in reach and readable. Lesson 5's Play, Pause and Step stay at the
foot of the screen while the settings above them scroll (there are 20 of them, 2,000 px of page)."""

from __future__ import annotations

import pytest

from testkit.browser import open_page, wait_idle

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
# Whether the button is on screen and nothing covers its middle (what a thumb would press).
PRESSABLE = """(button) => {
  const r = button.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  return r.top >= 0 && r.bottom <= innerHeight && button.contains(document.elementFromPoint(x, y));
}"""
SCROLL = "(y) => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, y)"


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    yield context
    context.close()


def test_lesson5_play_pause_and_step_are_in_reach_above_the_settings(server, phone):
    page = open_page(phone, f"{server}/playground")
    buttons = [page.get_by_role("button", name=name, exact=True) for name in ("Play", "Pause", "Step")]
    last_setting = page.get_by_text("Discretize output", exact=True)
    below = last_setting.bounding_box()["y"] - PHONE["height"]  # how far the settings go on below the screen
    assert below > 1000
    for y in (0, below // 2, below - 50):  # the top of the page, and further down the settings
        page.evaluate(SCROLL, y)
        page.wait_for_timeout(200)
        assert last_setting.bounding_box()["y"] > PHONE["height"]  # the settings still go on below
        assert all(b.evaluate(PRESSABLE) for b in buttons), y
    buttons[2].click()  # Step, from up here: it works
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('.studio-live')?.dataset.painted === '1'")


def test_lesson1_table_keeps_its_row_labels_when_it_scrolls_sideways(server, phone):
    """Seven columns do not fit 390 px: the grid scrolls sideways, and its first column (what each row is) stays
    where it was, pixel for pixel, while the numbers move under it."""
    page = open_page(phone, f"{server}/custom_function")
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = grid.bounding_box()
    labels = {"x": box["x"] + 2, "y": box["y"] + 2, "width": 110, "height": box["height"] - 4}
    before = page.screenshot(clip=labels)
    scrolled = grid.evaluate("""(g) => { const s = g.querySelector('.dvn-scroller');
      s.scrollLeft = s.scrollWidth; return s.scrollLeft; }""")
    assert scrolled > 50  # it does scroll: the table is wider than the phone
    page.wait_for_timeout(500)
    assert page.screenshot(clip=labels) == before


NAMES = """(plot) => {
  const tiles = [...plot.querySelectorAll('.heatmaplayer image')].map((i) => i.getBoundingClientRect());
  const left = Math.min(...tiles.map((t) => t.left)), chart = plot.getBoundingClientRect();
  return [...plot.querySelectorAll('.annotation-text')].filter((t) => /^(sin )?X[12]/.test(t.textContent))
    .map((t) => { const r = t.getBoundingClientRect();
                  return {name: t.textContent, inside: r.left >= chart.left && r.right <= left + 1,
                          level: tiles.some((i) => i.left - left < 2 && i.top < r.top && r.bottom < i.bottom)}; });
}"""


def test_lesson5_diagram_names_its_input_tiles(server, phone):
    page = open_page(phone, f"{server}/playground?pg_sinx1=1")
    plot = page.locator('.st-key-pg_network .js-plotly-plot')
    plot.locator(".annotation-text").first.wait_for()
    names = plot.evaluate(NAMES)
    assert [n["name"] for n in names] == ["X1", "X2", "sin X1"], names
    assert all(n["inside"] and n["level"] for n in names), names  # on screen, left of its tile, level with it


TITLE_LINES = """() => { const h1 = document.querySelector('[data-testid="stMainBlockContainer"] h1');
  const walker = document.createTreeWalker(h1, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const at = n.textContent.indexOf('X');
    if (at < 0) continue;
    const range = document.createRange(); range.setStart(n, at); range.setEnd(n, n.textContent.length);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return {text: h1.innerText, lines: tops.size};  // the lines "X-ray" is drawn on
  }
  return null; }"""


def test_lesson4s_title_keeps_x_ray_on_one_line(server, phone):
    """The title once broke as "4 · Autograd X-" / "ray" on a phone."""
    page = open_page(phone, f"{server}/xray")
    title = page.evaluate(TITLE_LINES)
    assert title is not None and title["lines"] == 1, title
