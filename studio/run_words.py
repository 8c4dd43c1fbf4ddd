"""A run's settings in the words of the widgets that made it ("Learning rate 0.01, Momentum 0.9, …"), for what a
run file says of itself: the caption over a loaded run, and the heading of an HTML export.

A run file keeps its lesson's URL parameters (``runs_io.run_record(settings=...)``); they are read back as a link's
are (``links.read_params``: each checked by its setting, the rest dropped), so a file's text reaches the page only
as the value of a setting, shown by that setting's label. Plain text here; the callers escape it for markdown or
HTML.
"""

from __future__ import annotations

from . import lessons
from .links import Setting, current_values, plain, read_params

MAX_PARAMS = 64  # a run file's settings: more than any lesson has


def shown(setting: Setting, value) -> str:
    """A setting's value as its widget shows it: 0.01, on/off, 4,2, a choice's name."""
    if setting.kind is bool:
        return "on" if value else "off"
    if setting.kind is tuple:
        return ",".join(str(v) for v in value)
    if setting.kind is float:
        return f"{value:g}"
    return str(value)


def values_of(lesson: str, params) -> dict:
    """The settings a run file's parameters (``{key: text}``) give, checked; {} for a file that has none."""
    if not isinstance(params, dict):
        return {}
    settings = list(lessons.lesson(lesson).settings)
    found, _ = read_params(settings, {k: [v] for k, v in list(params.items())[:MAX_PARAMS] if isinstance(v, str)})
    return found


def _pairs(lesson: str, values: dict, config=None) -> list[tuple[str, str]]:
    """(label, value) of each setting the values give, in the lesson's order (not the pace, which changes no
    number of the run), then where it ran (``config``'s device and dtype)."""
    pace = f"{lesson}_speed"
    pairs = [(s.label or s.key, shown(s, values[s.key])) for s in lessons.lesson(lesson).settings
             if s.key in values and s.key != pace]
    where = [str(getattr(config, name)) for name in ("device", "dtype") if getattr(config, name, None)]
    return pairs + ([("on", " in ".join(where))] if where else [])


def words(lesson: str, values: dict, config=None) -> str:
    """"Learning rate 0.01, Momentum 0.9, …, on cpu in float32" as markdown: the labels are ours (a label may hold
    code), each value is escaped (it came from a file)."""
    return ", ".join(f"{label} {plain(value)}" for label, value in _pairs(lesson, values, config))


def text(lesson: str, values: dict, config=None) -> str:
    """The same as plain text (for an HTML page, which escapes it): the labels' code marks dropped."""
    return ", ".join(f"{label.replace('`', '')} {value}" for label, value in _pairs(lesson, values, config))


def differences(lesson: str, values: dict) -> list[str]:
    """Where the widgets on the page now show other values than the run's, as markdown: "Learning rate 0.05 (the
    run's 0.01)", each value escaped."""
    settings = [s for s in lessons.lesson(lesson).settings if s.key in values and s.key != f"{lesson}_speed"]
    now = current_values(settings)
    return [f"{s.label or s.key} {plain(shown(s, now[s.key]))} (the run's {plain(shown(s, values[s.key]))})"
            for s in settings if s.key in now and now[s.key] != values[s.key]]


def heading(lesson: str, values: dict, config=None) -> tuple[str, str]:
    """An export's heading: the lesson's title, and its settings in words (plain text)."""
    return lessons.lesson(lesson).nav_title, text(lesson, values, config)
