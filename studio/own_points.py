"""Lesson 5's own points as a setting: ``pg_points`` is its widget-free key, its query parameter and a run's
``points``, like every setting, with two differences. A preset leaves it alone (a class's drawing is not a
preset's), and the link carries the points only while they fit ``LINK_CHARS`` characters; longer, the link holds
the settings alone, and the page says so (``link_note``).

The points are a tuple of ``(x1, x2, class or target)``; in a link, ``1.5,-2,0;0.25,3,2`` (``own_data``).
"""

from __future__ import annotations

from typing import Any

from autodiff_core.own_data import LINK_CHARS, link_text, parse_link

from .links import Setting


class PointsSetting(Setting):
    """A tuple of points, written into the link as ``own_data.link_text`` writes it, while it fits."""

    def parse(self, text: str) -> tuple[Any, str]:
        try:
            return parse_link(text), ""
        except ValueError as exc:
            return None, str(exc)

    def format(self, value: Any) -> str:
        text = link_text(value)
        return text if len(text) <= LINK_CHARS else ""


def link_note(points: tuple) -> str:
    """What the page says of the link when the points do not fit in it; "" when they do."""
    chars = len(link_text(points))
    if chars <= LINK_CHARS:
        return ""
    return (f"The link holds the settings only: your {len(points):,} points take {chars:,} characters, more than "
            f"the {LINK_CHARS:,} a link carries. The run file (JSON) and the exported script hold them all.")
