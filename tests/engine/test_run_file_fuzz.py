"""Run files from outside are bounded: hostile files (too big, too deep, the wrong types, markdown in their
text) get one plain sentence that names the problem, checked before anything is built from them; the largest
files the app itself saves still load, well inside every cap."""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import subprocess
import sys
import textwrap

import pytest

from autodiff_core import LogisticConfig, TwoLayerConfig, run_file_json, runs_io, train_logistic, train_two_layer
from autodiff_core.features import FEATURES
from autodiff_core.landscape import MAX_STEPS as LANDSCAPE_STEPS
from autodiff_core.landscape import LandscapeConfig, train_landscape
from autodiff_core.playground import MAX_DEPTH, Playground, PlaygroundConfig
from autodiff_core.runs_io import from_json, run_record, to_json
from studio import classroom, keeping
from studio.lessons import MAX_NEURONS, lesson
from tests.studio.test_classroom import _same

MD = ("**bold**", "[x](http://evil.example)", "![i](http://evil.example/i.png)", "<img src=x onerror=alert(1)>")


def _records() -> dict[str, dict]:
    """A small real run file of each lesson, as plain data."""
    logistic = LogisticConfig(record_every=1, max_iterations=30)
    two_layer = TwoLayerConfig(steps=20)
    playground = PlaygroundConfig(hidden=(4,), n_per_class=20, grid=8)
    return {"logistic": run_record("logistic", logistic, list(train_logistic(logistic))),
            "two_layer": run_record("two_layer", two_layer, list(train_two_layer(two_layer))),
            "playground": run_record("playground", playground, list(Playground(playground).run(10, 5)))}


RECORDS = _records()


def edited(lesson: str, change) -> str:
    """A real run file of ``lesson`` with ``change(record)`` applied to a copy of it."""
    record = copy.deepcopy(RECORDS[lesson])
    change(record)
    return to_json(record) if _strict(record) else json.dumps(record)


def _strict(record) -> bool:
    try:
        to_json(record)
        return True
    except ValueError:
        return False


def state(lesson: str, i: int = 0, **fields):
    def change(record):
        record["snapshots"][i].update(fields)
    return edited(lesson, change)


def setting(lesson: str, **fields):
    return edited(lesson, lambda record: record["config"].update(fields))


def raw(lesson: str, old: str, new: str) -> str:
    """The run file's text with its first ``old`` replaced by ``new`` (tokens JSON lets no encoder write)."""
    text = to_json(RECORDS[lesson])
    assert old in text
    return text.replace(old, new, 1)


def surface_file(states: int, grid: int, cell: str = "0", config_grid: int | None = None) -> str:
    """A lesson-5 run file of ``states`` states, their surfaces ``grid`` x ``grid`` (the config's grid unless
    ``config_grid`` is given), made as text: cheap at any size."""
    record = copy.deepcopy(RECORDS["playground"])
    record["config"]["grid"] = config_grid or grid
    one = dict(record["snapshots"][0], surface="SURFACE")
    row = "[" + ",".join([cell] * grid) + "]"
    body = json.dumps(one).replace('"SURFACE"', "[" + ",".join([row] * grid) + "]")
    record["snapshots"] = "STATES"
    return json.dumps(record).replace('"STATES"', "[" + ",".join([body] * states) + "]")


def ragged(record):
    record["snapshots"][1]["surface"][4] = record["snapshots"][1]["surface"][4][:-1]


def deep_message(record):
    record["message"] = json.loads("[" * 40 + "]" * 40)


LOGISTIC = to_json(RECORDS["logistic"])
HOSTILE = {  # name: (the file, words its message must hold)
    "nested 200,000 deep": ("[" * 200_000, "nested 200,000 levels deep"),
    "nested inside a real file": (edited("logistic", deep_message), "nested 41 levels deep"),
    "config is a list": (edited("logistic", lambda r: r.update(config=[1, 2])), "settings (\"config\") are a list"),
    "a string loss": (state("logistic", 3, loss="0.5"), 'state 4 has a loss of the text "0.5"'),
    "step Infinity": (raw("two_layer", '"step":12', '"step":Infinity'), "state 13 has a step of Infinity"),
    "step of 4,000 digits": (raw("two_layer", '"step":12', '"step":' + "9" * 4000), "4,000-digit number"),
    "step {}": (state("two_layer", 12, step={}), "state 13 has a step of an object of 0 fields"),
    "loss NaN": (raw("two_layer", '"loss":', '"loss":NaN,"x":'), "loss of NaN"),
    "-Infinity in a surface": (surface_file(2, 8, "-Infinity"), "state 1 has a surface whose row 1 holds -Infinity"),
    "bold key": (setting("logistic", **{MD[0]: 1}), f'a setting "{MD[0]}"'),
    "link key": (setting("logistic", **{MD[1]: 1}), f'a setting "{MD[1]}"'),
    "image key": (setting("logistic", **{MD[2][:20]: 1}), f'a setting "{MD[2][:20]}"'),
    "image value": (setting("playground", dataset=MD[2]), f'dataset is the text "{MD[2]}", which is not'),
    "html value": (state("logistic", 0, iteration=MD[3]), MD[3]),
    "link format": (edited("logistic", lambda r: r.update(format=MD[1])), f'format is the text "{MD[1]}"'),
    "bold lesson": (edited("logistic", lambda r: r.update(lesson=MD[0])), f'lesson is the text "{MD[0]}"'),
    "too many states": (edited("logistic", lambda r: r.update(snapshots=r["snapshots"] * 400)),
                        "12,000 states; a run file holds at most 10,000"),
    "45 MB of 200 x 200 surfaces": (surface_file(560, 200), "MB; a run file is at most 8 MB"),
    "oversized surfaces": (surface_file(16, 200), "hold 640,000 surface points"),
    "surfaces off the grid": (surface_file(2, 9, config_grid=8), "surface of a list of 9 items; on this run's 8 x 8"),
    "a ragged surface": (edited("playground", ragged), "state 2 has a surface whose row 5 is a list of 7 items"),
    "text in a surface": (surface_file(2, 8, '"x"'), 'holds the text "x"'),
    "a number as surface": (state("playground", 1, surface=0.5), "has a surface of 0.5"),
    "wrong kind": (edited("logistic", lambda r: r.update(lesson="xray")), 'lesson is the text "xray"'),
    "no lesson": (edited("logistic", lambda r: r.pop("lesson")), "lesson is null"),
    "no states": (edited("logistic", lambda r: r.pop("snapshots")), 'no recorded states ("snapshots")'),
    "no settings": (edited("logistic", lambda r: r.pop("config")), 'no settings ("config")'),
    "empty states": (edited("logistic", lambda r: r.update(snapshots=[])), "holds no recorded states"),
    "a state without its loss": (edited("two_layer", lambda r: r["snapshots"][2].pop("loss")), "state 3 has no loss"),
    "format version 2": (edited("logistic", lambda r: r.update(format="autograd-studio-run/2")),
                         'format is the text "autograd-studio-run/2"'),
    "no format": (edited("logistic", lambda r: r.pop("format")), 'has no "format"'),
    "true as a loss": (state("logistic", 0, loss=True), "loss of true"),
    "true as a step": (state("two_layer", 0, step=True), "step of true"),
    "a negative step": (state("two_layer", 0, step=-5), "step of -5"),
    "a fractional step": (state("two_layer", 0, step=3.5), "step of 3.5"),
    "a float too big": (raw("logistic", '"loss":', '"loss":1e999,"x":'), "loss of 1e999"),
    "a setting out of range": (setting("playground", grid=1000), "grid must be an integer from 5 to 200; got 1000"),
    "a long unknown activation": (setting("two_layer", activation="y" * 200), "activation is the text \"yyy"),
    "a setting of the wrong type": (setting("playground", grid="32"), 'setting grid is the text "32"'),
    "a setting's list too long": (setting("playground", hidden=[1] * 100), "hidden is a list of at most 16"),
    "unicode junk key": (setting("logistic", **{"\u202e\u200b\x00💥": 1}), "that lesson logistic does not have"),
    "a lone surrogate": (raw("logistic", '"message":""', '"message":"\\ud800"'), '"message" is the text'),
    "a long message": (state("logistic", 0, message="m" * 10_001), "text of at most 10,000 characters"),
    "versions as a list": (edited("logistic", lambda r: r.update(versions=[MD[1]])), '"versions" are a list of 1'),
    "a state that is a list": (edited("logistic", lambda r: r["snapshots"].__setitem__(1, [1])), "state 2 is a list"),
    "truncated": (LOGISTIC[: len(LOGISTIC) // 2], "may have been cut short"),
    "trailing junk": (LOGISTIC + "]", "Extra data"),
    "an open string of 3,000,000 escaped quotes": ('"' + '\\"' * 3_000_000, "may have been cut short"),
    "not json": ("not json", "not valid JSON"),
    "non-UTF-8 bytes": (b"\xff\xfe{\x00}\x00", "not UTF-8 text"),
    "UTF-16 with its BOM": (LOGISTIC.encode("utf-16"), "not UTF-8 text"),
    "a BOM before a list": (b"\xef\xbb\xbf[]", "holds a list of 0 items where a run file holds one object"),
    "two BOMs": ("\ufeff\ufeff" + LOGISTIC, "two byte order marks"),
    "two BOMs, as bytes": (("\ufeff\ufeff" + LOGISTIC).encode(), "two byte order marks"),
    "empty file": (b"", "This file is empty"),
    "only spaces": ("  \n\t ", "This file is empty"),
    "a JSON string": ('"**run**"', 'holds the text "**run**"'),
    "150,000 objects": ("[" + "{}," * 150_000 + "{}]", "150,002 lists and objects"),
    "900,000 numbers": ("[" + "0," * 900_000 + "0]", "900,002 values"),
    "60 MB": (b" " * 60_000_000, "This file is 60.0 MB"),
}


def message(data) -> str:
    with pytest.raises(ValueError) as info:
        from_json(data)
    return str(info.value)


def one_sentence(text: str) -> bool:
    outside_quotes = re.sub(r'"[^"]*"|\'[^\']*\'', "…", text)
    return (text.startswith("This ") and text.endswith(".") and "\n" not in text
            and not re.search(r"[.!?] [A-Z]", outside_quotes[:-1]))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_run_file_gets_one_sentence_that_names_its_problem(name):
    data, words = HOSTILE[name]
    text = message(data)
    assert words in text, text
    assert one_sentence(text) and len(text) <= 320 and "Traceback" not in text and "Error" not in text, text


def test_markdown_in_a_file_stays_in_the_message_as_plain_characters():
    for name in ("bold key", "link key", "image value", "html value"):
        text = message(HOSTILE[name][0])
        shown = classroom.plain(text)
        assert re.sub(r"\\(.)", r"\1", shown) == text  # the markdown shows exactly the sentence
        assert not re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\.", "", shown))  # every mark escaped: no markup


def test_a_file_is_refused_before_it_is_parsed(monkeypatch):
    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(runs_io.json, "loads", no_parsing)
    for name in ("nested 200,000 deep", "45 MB of 200 x 200 surfaces", "150,000 objects", "900,000 numbers", "60 MB"):
        message(HOSTILE[name][0])


def test_a_run_file_with_a_bom_or_from_a_gpu_still_loads():
    lesson, config, snaps, _ = from_json(b"\xef\xbb\xbf" + LOGISTIC.encode())
    assert lesson == "logistic" and len(snaps) == len(RECORDS["logistic"]["snapshots"])
    assert from_json("\ufeff" + LOGISTIC)[1] == config
    assert from_json(setting("playground", device="cuda:0"))[1].device == "cuda:0"  # its replay is drawn on the CPU


@functools.cache
def largest(lesson: str) -> tuple:
    """(config, snapshots) of the largest run file a lesson's page can save: its settings at their page maximum,
    as many states as a run keeps (studio.runner), each recorded at its step."""
    if lesson == "logistic":
        config = LogisticConfig(n_per_class=5000, mean=0.3, momentum=0.999, max_iterations=100_000, record_every=1,
                                stop_accuracy=1.0)
        return config, list(itertools.islice(train_logistic(config), keeping.MAX_KEPT))
    if lesson == "two_layer":  # the page records every step of a run of up to 3,999 steps (steps // 2000);
        # the sizes only change the numbers, not how long they are written
        config = TwoLayerConfig(N=8, D_in=8, H=8, D_out=2, steps=keeping.MAX_KEPT - 1, record_every=1)
        return config, list(train_two_layer(config))
    if lesson == "optimizers":  # every step of the longest run, five optimizers' weights and losses each
        config = LandscapeConfig(landscape="Rosenbrock's valley", steps=LANDSCAPE_STEPS)
        return config, list(train_landscape(config))
    config = PlaygroundConfig(dataset="Spirals", n_per_class=500, noise=0.5, test_fraction=0.5,
                              features=tuple(FEATURES), hidden=(MAX_NEURONS,) * MAX_DEPTH, batch_size=1000)
    pg = Playground(config)
    kept = max(100, min(keeping.MAX_KEPT, keeping.KEPT_BYTES // keeping.size_of(pg.snapshot())))  # as LiveRun keeps
    return config, list(pg.run(kept - 1, 1))


@pytest.mark.parametrize("lesson", list(runs_io.KINDS))  # every lesson that saves runs
def test_the_largest_run_file_of_each_lesson_loads_well_inside_every_cap(lesson):
    config, snaps = largest(lesson)
    text = to_json(run_record(lesson, config, snaps))
    deepest, containers, values = run_file_json.shape(text)
    assert len(text) * 4 < run_file_json.MAX_JSON_BYTES and values * 4 < run_file_json.MAX_VALUES
    assert containers * 4 < run_file_json.MAX_CONTAINERS and len(snaps) * 2 <= runs_io.MAX_STATES
    assert deepest < run_file_json.MAX_NESTING
    if lesson == "playground":
        assert len(snaps) * config.grid ** 2 * 4 < runs_io.MAX_SURFACE_POINTS
    loaded, config2, snaps2, _ = from_json(text.encode())
    assert loaded == lesson and config2 == config and len(snaps2) == len(snaps)
    for a, b in zip(snaps, snaps2, strict=True):
        for field in a.__dataclass_fields__:
            x, y = getattr(a, field), getattr(b, field)
            assert _same(x, y) or x != x or abs(x) == float("inf"), field  # non-finite floats come back NaN


def _upload(at, lesson: str, data: bytes):
    at.file_uploader(key=f"{lesson}_load").set_value(("run.json", data, "application/json"))
    return at.run()


def test_hostile_uploads_show_a_plain_message_and_never_an_exception(app):
    app.switch_page("pages/logistic.py").run()
    for name in ("config is a list", "bold key", "link key", "step Infinity", "nested 200,000 deep",
                 "two BOMs, as bytes"):
        data = HOSTILE[name][0]
        _upload(app, "logistic", data if isinstance(data, bytes) else data.encode())
        assert not app.exception, name
        [error] = app.error
        assert error.value == classroom.plain(message(data)), name
    assert "\\*\\*bold\\*\\*" in classroom.plain(message(HOSTILE["bold key"][0]))
    _upload(app, "logistic", to_json(RECORDS["two_layer"]).encode())  # a real file of another lesson
    title = classroom.plain(f"a run of {lesson('two_layer').nav_title};")  # as navigation names it, not its key
    said = app.error[0].value
    assert not app.exception and title in said and "two\\_layer" not in said
    _upload(app, "logistic", LOGISTIC.encode())  # and a real one of this lesson replays
    assert not app.exception and not app.error
    states = len(RECORDS["logistic"]["snapshots"])
    assert any(c.value.startswith(f"Loaded run: {states} recorded states") for c in app.caption)


def test_a_refused_large_file_leaves_the_memory_as_it_was():
    """RSS in a fresh process before and after refusing hostile files far over the caps (within 10 %)."""
    script = textwrap.dedent("""
        import gc, json, sys
        sys.path.insert(0, sys.argv[1])
        from autodiff_core.runs_io import from_json
        def rss():
            gc.collect()
            return int(open("/proc/self/statm").read().split()[1]) * 4096
        def refuse(text):
            try:
                from_json(text)
            except ValueError:
                return
            raise SystemExit("loaded")
        refuse("[" * 100)  # warm: everything the checks import and compile
        before = rss()
        for make in (lambda: "[" + "{}," * 2_600_000 + "{}]", lambda: "[" + "0.5," * 1_900_000 + "0]",
                     lambda: "[" + "[[0,0],[0,0]]," * 500_000 + "0]", lambda: "[" * 7_000_000,
                     lambda: " " * 45_000_000, lambda: '{"format": 1, "a": [' + "0.5," * 790_000 + "0]}"):
            refuse(make())
        print(json.dumps([before, rss()]))
    """)
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", script, root], capture_output=True, text=True, timeout=300, check=True)
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert after <= before * 1.10, (before, after)


def test_a_run_file_made_on_a_gpu_replays_here_on_the_cpu(app):
    app.switch_page("pages/playground.py").run()
    _upload(app, "playground", setting("playground", device="cuda:0").encode())
    assert not app.exception and not app.error
    assert any(c.value.startswith("Loaded run: 3 recorded states") for c in app.caption)
