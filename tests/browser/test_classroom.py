"""Classroom mode in headless Chromium: a teacher's link, the presenter view at 1280x720, exports.

Presenter screenshots go to docs/presenter-*.png (the README shows them)."""

from __future__ import annotations

import csv
import io
import json
import struct
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testkit.browser import ROOT, exception_boxes, open_page, set_number, wait_idle

pytestmark = pytest.mark.browser
DOCS = ROOT / "docs"
PRESENTER = {"width": 1280, "height": 720}

MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const cs = getComputedStyle(main);
  const content = main.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const sizes = (root, sel) => [...root.querySelectorAll(sel)].filter(t => t.textContent.trim())
      .map(t => parseFloat(getComputedStyle(t).fontSize));
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.getBoundingClientRect().width > 0)
    .map(p => { const b = p.getBoundingClientRect();
      return {top: b.top, left: b.left, width: b.width, ticks: sizes(p, '.xtick text, .ytick text'),
              titles: sizes(p, '.gtitle, .g-xtitle text, .g-ytitle text, .g-y2title text, .g-y3title text, '
                               + '.g-x2title text, .annotation-text')}; });
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const graphs = [...document.querySelectorAll('[data-testid="stGraphVizChart"] svg')].map(svg => {
    const scale = svg.getScreenCTM().a;
    return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale); });
  const toggle = [...document.querySelectorAll('[data-testid="stCheckbox"], [data-testid="stToggle"]')]
    .find(t => t.textContent.includes('Presenter view'));
  return {content, plots, graphs, sidebar: sidebar ? sidebar.getBoundingClientRect().width : 0,
          url: location.href, presenting: toggle ? toggle.querySelector('input')?.checked : null};
}"""


def metrics(page) -> str:
    return page.locator(".studio-live .studio-metrics").inner_text()


def finish_two_layer(page) -> str:
    page.get_by_role("button", name="Train").click()
    page.locator('.studio-live[data-status="done"]').wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_role("button", name="Pin as reference").wait_for()  # the finished view's rerun is drawn
    return metrics(page)


def test_a_teachers_link_reproduces_the_run_in_a_fresh_browser(server, browser):
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(teacher, f"{server}/two_layer")
    set_number(page, "Learning rate", "2e-6")
    set_number(page, "Steps", 120)
    set_number(page, "H (hidden)", 50)
    page.get_by_role("combobox", name="ReLU implementation").click()
    page.get_by_role("option", name="torch.relu", exact=True).click()
    wait_idle(page)
    page.get_by_role("slider", name="Speed (steps per second)").press("End")
    wait_idle(page)
    numbers = finish_two_layer(page)
    link = page.url
    assert "tl_lr=2e-06" in link and "tl_H=50" in link and "tl_activation=torch.relu" in link
    teacher.close()
    student = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(student, link)
    # the link's values reach the widgets with the script run the page opens with (the first paint may be
    # a default frame while the sidebar and the link are read)
    expect(page.get_by_label("H (hidden)", exact=True)).to_have_value("50", timeout=20_000)
    expect(page.get_by_label("Steps", exact=True)).to_have_value("120", timeout=20_000)
    assert finish_two_layer(page) == numbers  # the same final loss and norms, digit for digit
    assert "step\n119" in numbers and exception_boxes(page) == 0
    student.close()


def replay_numbers(page) -> str:
    """Lesson 3's finished view: the replay's caption (iteration, accuracy, loss, weights) as drawn. (The run trains
    first: as long as the other live-chart waits, for a machine other jobs keep busy.)"""
    page.get_by_text("▶ Play").first.wait_for(timeout=60_000)
    return page.locator(".js-plotly-plot .gtitle").first.text_content()


def test_the_issues_lesson3_link_gives_the_teachers_numbers(server, browser):
    """lr 0.5, 30 points, momentum 0 and zero_grad forgotten: a fresh browser stops where the teacher's did."""
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(teacher, f"{server}/logistic")
    set_number(page, "Learning rate", 0.5)
    set_number(page, "Points per class", 30)
    set_number(page, "Momentum", 0)
    page.get_by_text("Forget").first.click()
    wait_idle(page)
    page.get_by_role("slider", name="Speed (iterations per second)").press("End")
    wait_idle(page)
    page.get_by_role("button", name="Train").click()
    numbers, link = replay_numbers(page), page.url
    assert "lr_lr=0.5" in link and "lr_n=30" in link and "lr_momentum=0.0" in link and "lr_forget=1" in link
    teacher.close()
    student = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(student, link)
    page.get_by_role("button", name="Train").click()
    assert replay_numbers(page) == numbers and numbers.startswith("Iteration:")
    assert exception_boxes(page) == 0
    student.close()


def test_a_playground_link_gives_the_same_data_model_and_steps(server, browser):
    """Lesson 5: dataset, noise, data seed, architecture and optimizer travel in the link; three Steps from
    the link give the teacher's numbers."""
    def three_steps(page) -> str:
        for _ in range(3):
            page.get_by_role("button", name="Step", exact=True).click()
            wait_idle(page)
        page.wait_for_function("() => document.querySelector('.studio-live')?.dataset.painted === '3'")
        return metrics(page)

    teacher = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(teacher, f"{server}/playground")
    page.get_by_role("combobox", name="Data").click()
    page.get_by_role("option", name="Two moons", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Regenerate").click()
    wait_idle(page)
    set_number(page, "Hidden layers", 3)
    page.get_by_role("combobox", name="Optimizer").click()
    page.get_by_role("option", name="SGD + momentum", exact=True).click()
    wait_idle(page)
    numbers, link = three_steps(page), page.url
    assert "pg_dataset=Two+moons" in link and "pg_data_seed=1" in link and "pg_hidden=8%2C8%2C8" in link
    teacher.close()
    student = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = open_page(student, link)
    assert three_steps(page) == numbers and "step\n3" in numbers
    assert exception_boxes(page) == 0
    student.close()


def test_a_bad_link_falls_back_with_a_warning_naming_the_parameter(server, browser):
    context = browser.new_context()
    page = open_page(context, f"{server}/two_layer?tl_steps=%C2%B2&tl_lr=[x](http://e.example)&tl_H=30")
    page.get_by_text("tl_steps").first.wait_for()
    assert page.get_by_text("in the link is not a whole number").is_visible()
    expect(page.get_by_label("Steps", exact=True)).to_have_value("500")  # the default, not the bad value
    expect(page.get_by_label("H (hidden)", exact=True)).to_have_value("30")  # the rest of the link applies
    assert page.locator('[data-testid="stMain"] a[href*="e.example"]').count() == 0
    context.close()


@pytest.mark.parametrize("lesson, path", [("1", "custom_function"), ("2", "two_layer"), ("3", "logistic"),
                                          ("4", "xray"), ("5", "playground")])
def test_presenter_view_at_720p(server, browser, lesson, path):
    context = browser.new_context(viewport=PRESENTER)
    page = open_page(context, f"{server}/{path}?present=1")
    if path == "two_layer":
        page.get_by_role("slider", name="Speed (steps per second)").press("End")
        wait_idle(page)
        finish_two_layer(page)
    if path == "logistic":  # the finished run's replay is the chart a teacher shows
        page.get_by_role("slider", name="Speed (iterations per second)").press("End")
        wait_idle(page)
        page.get_by_role("button", name="Train").click()
        replay_numbers(page)
    if path == "playground":
        page.get_by_role("slider", name="Speed (steps per second)").press("End")
        wait_idle(page)
        page.get_by_role("button", name="Play").click()
        page.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 300",
                               timeout=60_000)
        page.get_by_role("button", name="Pause").click()
        wait_idle(page)
    if path == "xray":
        page.locator('[data-testid="stGraphVizChart"] svg').first.wait_for(timeout=30_000)
    else:
        page.wait_for_function("() => document.querySelector('.js-plotly-plot .xtick')", timeout=30_000)
    page.wait_for_timeout(500)
    m = page.evaluate(MEASURE)
    page.screenshot(path=str(DOCS / f"presenter-lesson{lesson}.png"))
    assert m["presenting"] is True and "present=1" in m["url"], m["url"]
    assert m["sidebar"] < 50, {k: m[k] for k in ("sidebar", "url", "presenting")}  # collapsed
    if path == "xray":
        sizes = [s for g in m["graphs"] for s in g]
        assert sizes and min(sizes) >= 14, sizes
    elif path == "custom_function":  # forward and backward side by side: the pair spans the content
        forward, backward = m["plots"][:2]
        span = backward["left"] + backward["width"] - forward["left"]
        assert max(forward["top"], backward["top"]) < 720 and span >= 0.9 * m["content"], m
    else:
        chart = m["plots"][0]
        assert chart["top"] < 720 and chart["width"] >= 0.9 * m["content"], m
    assert path == "xray" or (m["plots"] and m["plots"][0]["ticks"]), m  # the main chart is measured
    for chart in m["plots"]:  # every chart on screen; a diagram without axes has no ticks to measure
        assert min(chart["ticks"], default=18) >= 18 and min(chart["titles"], default=22) >= 22, chart
    assert exception_boxes(page) == 0
    context.close()


PLOT_AREA = """() => { const area = document.querySelector('.studio-live .js-plotly-plot .nsewdrag');
  return area ? area.getBoundingClientRect().bottom : null; }"""


def test_the_presenter_view_keeps_lesson_5s_plot_on_the_projectors_screen(server, browser):
    """With a preset whose settings come with notes (noise 0), the notes are the teacher's to say: they once pushed
    the plot 40 px past the bottom of a 720 px screen."""
    context = browser.new_context(viewport=PRESENTER)
    page = open_page(context, f"{server}/playground?preset=spirals-need-depth&present=1")
    page.wait_for_function("() => document.querySelector('.studio-live .js-plotly-plot .xtick')", timeout=60_000)
    page.wait_for_timeout(500)
    assert page.locator('[data-testid="stAlert"]').count() == 0
    bottom = page.evaluate(PLOT_AREA)
    assert bottom is not None and bottom <= 720, bottom
    context.close()


def test_the_presenter_graph_keeps_its_size_in_a_narrow_wrapper(server, browser):
    """Streamlit shrinks a graph to fit its wrapper (max-width 100%); the presenter view bounds it by the screen
    instead, so a wrapper narrower than the page leaves the graph's text at its size."""
    context = browser.new_context(viewport=PRESENTER)
    page = open_page(context, f"{server}/xray?present=1")
    page.locator('[data-testid="stGraphVizChart"] svg').first.wait_for(timeout=30_000)
    page.evaluate("""() => { const chart = document.querySelector('[data-testid="stGraphVizChart"]');
                             chart.style.width = '300px'; chart.parentElement.style.width = '300px'; }""")
    sizes = [s for g in page.evaluate(MEASURE)["graphs"] for s in g]
    assert sizes and min(sizes) >= 14, sizes
    context.close()

def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_exports_parse_reload_and_play_offline(server, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = open_page(context, f"{server}/two_layer?tl_steps=80&two_layer_speed=max")
    finish_two_layer(page)
    files = {}
    for label in ("CSV", "JSON", "HTML"):
        with page.expect_download() as info:
            page.get_by_role("button", name=label, exact=True).click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        files[label] = path
    rows = list(csv.DictReader(io.StringIO(files["CSV"].read_text())))
    assert len(rows) == 80 and rows[-1]["step"] == "79"
    record = json.loads(files["JSON"].read_text())
    assert record["config"]["steps"] == 80 and len(record["snapshots"]) == 80
    assert {"torch", "numpy", "app"} <= set(record["versions"])
    sizes = {label: f.stat().st_size for label, f in files.items()}
    (DOCS.parent / "artifacts").mkdir(exist_ok=True)
    (DOCS.parent / "artifacts" / "export-sizes.json").write_text(json.dumps(sizes))

    # Loading the JSON back shows the run's replay; nothing trains.
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(files["JSON"]))
    page.get_by_text("Replayed, not trained").wait_for(timeout=30_000)
    wait_idle(page)
    assert page.get_by_text("Loaded run: 80 recorded states").is_visible()
    assert exception_boxes(page) == 0
    context.close()
    check_offline_replay(browser, files["HTML"])


def check_offline_replay(browser, html: Path) -> None:
    """The standalone replay with every request but the file itself refused: Plotly is inside it."""
    context = browser.new_context()
    blocked = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(html.as_uri())
    page.wait_for_function("() => window.Plotly && document.getElementById('replay')?._transitionData?._frames?.length")
    frames = page.evaluate("""() => document.getElementById('replay')._transitionData._frames
                               .map(f => JSON.stringify(f.data))""")
    assert len(frames) > 10 and len(set(frames)) == len(frames)  # every frame differs
    title = page.locator(".gtitle").text_content()
    page.get_by_text("▶ Play").click()
    page.wait_for_function(f"() => document.querySelector('.gtitle').textContent !== {json.dumps(title)}")
    assert not blocked, blocked
    context.close()


def test_png_of_a_chart_at_presenter_size(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = open_page(context, f"{server}/custom_function")
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    with page.expect_download() as info:
        chart.locator('[data-title="Download plot as a PNG"]').click()
    assert png_size(Path(info.value.path()).read_bytes()) == (1280, 720)
    page = open_page(context, f"{server}/two_layer?tl_steps=30&two_layer_speed=max")  # the live chart's button
    finish_two_layer(page)
    with page.expect_download() as info:
        page.get_by_role("button", name="PNG", exact=True).click()
    assert info.value.suggested_filename == "two_layer-chart.png"
    assert png_size(Path(info.value.path()).read_bytes()) == (1280, 720)
    context.close()
