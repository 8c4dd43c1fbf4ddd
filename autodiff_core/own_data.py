"""The class's own points for lesson 5: drawn on the plane or read from a CSV file, checked, and carried by the
config (so run files and the exported script hold them) and, where they fit, by the link.

A point is ``(x1, x2, value)``: its coordinates and its class (0 to 5) or, for a regression, its target (-1 to
1). Everything here is data from outside: every value is checked with ASCII-only patterns and limits before it
is used, and a problem is one sentence that names the line of the file. The sentences quote the file's text;
a page shows them as plain text, never as markup.
"""

from __future__ import annotations

import csv
import io
import math
import re

import torch

from .classes import MAX_CLASSES
from .data import EXTENT, blobs, plane

Point = tuple[float, float, float]
MAX_POINTS = 2_000  # rows of a file, points of a config
MIN_POINTS = 4  # a few to train on and one to test on
MAX_COORD = 100.0  # |x1| and |x2| at most this
MAX_FILE_BYTES = 256_000  # 2,000 rows of long numbers fit in about 100 KB
MAX_LABEL = 30  # characters of a label
LINK_CHARS = 3_000  # the points a link carries, written out, at most this long; else it holds the settings only
STARTER_PER_CLASS = 5  # "Your points" with none yet starts from this many per class, to add to and erase
_NUMBER = re.compile(r"[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")


def _quote(text: str, limit: int = MAX_LABEL) -> str:
    """File text as a sentence quotes it: printable characters only, at most ``limit`` of them."""
    shown = "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in text[:limit])
    return f'"{shown}{"…" if len(text) > limit else ""}"'


def number(text: str) -> float | None:
    """``text`` as a finite number, or None: ASCII digits only (Python's float() also takes '١', '1_0', 'nan')."""
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def require_points(points: object, regression: bool) -> None:
    """``points`` must be MIN_POINTS to MAX_POINTS triples (x1, x2, class or target) within the limits."""
    if not isinstance(points, tuple) or not MIN_POINTS <= len(points) <= MAX_POINTS:
        count = f"{len(points):,}" if isinstance(points, tuple) else repr(type(points).__name__)
        raise ValueError(f"points must be {MIN_POINTS} to {MAX_POINTS:,} (x1, x2, value) triples; got {count}.")
    for i, p in enumerate(points, 1):
        if not (isinstance(p, tuple) and len(p) == 3 and all(type(v) in (int, float) and math.isfinite(v) for v in p)):
            raise ValueError(f"points: point {i} is not three finite numbers (x1, x2, value).")
        x1, x2, v = p
        if abs(x1) > MAX_COORD or abs(x2) > MAX_COORD:
            raise ValueError(f"points: point {i} lies outside -{MAX_COORD:g} to {MAX_COORD:g}.")
        if regression and not -1 <= v <= 1:
            raise ValueError(f"points: point {i}'s target {v:g} is outside -1 to 1.")
        if not regression and (v != int(v) or not 0 <= v < MAX_CLASSES):
            raise ValueError(f"points: point {i}'s class {v:g} is not a whole number from 0 to {MAX_CLASSES - 1}.")


def classes_in(points: tuple[Point, ...]) -> int:
    """How many classes the points need: their largest class + 1 (at least 2)."""
    return max(2, 1 + max((int(p[2]) for p in points), default=0))


def extent(points: tuple[Point, ...]) -> tuple[float, float, float, float]:
    """The plane that shows every point: TF's -6..6, or a square a little wider where a point lies beyond it."""
    reach = max((max(abs(p[0]), abs(p[1])) for p in points), default=0.0)
    if reach <= EXTENT[1]:
        return EXTENT
    r = float(math.ceil(reach * 1.05))
    return (-r, r, -r, r)


def tensors(points: tuple[Point, ...], regression: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, 2) float32 coordinates and (n,) float32 classes or targets, as the dataset registry gives them."""
    t = torch.tensor(points, dtype=torch.float64).reshape(-1, 3)
    return t[:, :2].float(), t[:, 2].float()


def split_mask(n: int, test_fraction: float, seed: int) -> torch.Tensor:
    """Which of ``n`` points are test points: point i when its own uniform draw is under ``test_fraction``. The
    draws come in order, so a point added at the end leaves every earlier point where it was; at least one point
    is tested and one trained on."""
    u = torch.rand(n, generator=torch.Generator().manual_seed(seed + 1))
    test = u < test_fraction
    if not test.any():
        test[u.argmin()] = True
    if test.all():
        test[u.argmax()] = False
    return test


def nearest(points: tuple[Point, ...], x: float, y: float, radius: float) -> int | None:
    """The index of the point nearest (x, y) within ``radius``, or None."""
    best, found = radius * radius, None
    for i, (px, py, _) in enumerate(points):
        d = (px - x) ** 2 + (py - y) ** 2
        if d <= best:
            best, found = d, i
    return found


def starter(classes: int, regression: bool, seed: int) -> tuple[Point, ...]:
    """A few points to start from when there are none yet: small blobs of each class, or a few points of TF's
    plane for a regression; coordinates to 2 decimals, as a click gives them."""
    g = torch.Generator().manual_seed(seed)
    if regression:
        x, y = plane(3 * STARTER_PER_CLASS, 0.0, g)
    else:
        x, y = blobs(STARTER_PER_CLASS * classes, 0.0, g, classes=classes)
    return tuple((round(a, 2), round(b, 2), round(v, 2)) for (a, b), v in zip(x.tolist(), y.tolist(), strict=True))


# ---- the link: "x1,x2,value;x1,x2,value;..." ----

def _short(v: float) -> str:
    text = repr(float(v))  # the shortest text that reads back as the same float
    return text[:-2] if text.endswith(".0") else text


def link_text(points: tuple[Point, ...]) -> str:
    """The points as a link writes them: ``1.5,-2,0;0.25,3,2``; ``parse_link`` reads back the very floats."""
    return ";".join(",".join(_short(v) for v in p) for p in points)


def parse_link(text: str) -> tuple[Point, ...]:
    """The points a link carries (``link_text``'s form), or ValueError saying why not; "" is no points. Only the
    form is checked here; ``require_points`` checks the values against the lesson's limits."""
    if not text:
        return ()
    if len(text) > LINK_CHARS:
        raise ValueError(f"is longer than the {LINK_CHARS:,} characters a link carries")
    points = []
    for i, row in enumerate(text.split(";"), 1):
        values = [number(v) for v in row.split(",")]
        if len(values) != 3 or None in values:
            raise ValueError(f"has a point ({i}) that is not three numbers")
        points.append(tuple(values))
    return tuple(points)


# ---- a CSV file: columns x1, x2 and label (classes) or target (a regression) ----

def _header(row: list[str]) -> tuple[dict[str, int], bool]:
    """The columns' places, by name (x1, x2, and label or target), and whether it is a regression."""
    names = [c.strip().lower() for c in row]
    kind = [k for k in ("label", "target") if k in names]
    missing = [k for k in ("x1", "x2") if k not in names]
    if missing or len(kind) != 1:
        want = "x1, x2 and label (or target, for a regression)"
        found = ", ".join(_quote(c) for c in row[:8]) or "nothing"
        why = "both label and target: keep one" if len(kind) == 2 else f"{found}"
        raise ValueError(f"Line 1 must name the columns {want}; it holds {why}.")
    if len(set(names)) != len(names):
        raise ValueError("Line 1 names a column twice; each of x1, x2 and label (or target) once.")
    return {k: names.index(k) for k in ("x1", "x2", kind[0])}, kind[0] == "target"


def _rows(text: str) -> tuple[dict[str, int], bool, list[tuple[int, list[str]]]]:
    reader = csv.reader(io.StringIO(text))
    try:
        head = next((row for row in reader if any(c.strip() for c in row)), None)
        if head is None:
            raise ValueError("The file is empty: line 1 names the columns x1, x2 and label, one point a line below.")
        columns, regression = _header(head)
        rows = []
        for row in reader:
            if not any(c.strip() for c in row):
                continue  # a blank line
            if len(rows) == MAX_POINTS:
                raise ValueError(f"The file holds more than {MAX_POINTS:,} points (line {reader.line_num}); "
                                 f"at most {MAX_POINTS:,} fit.")
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise ValueError(f"Line {reader.line_num} is not CSV that can be read ({exc}).") from None
    return columns, regression, rows


def _cell(line: int, row: list[str], place: int, name: str) -> str:
    if place >= len(row) or not row[place].strip():
        raise ValueError(f"Line {line} has no {name}.")
    return row[place].strip()


def _coordinate(line: int, row: list[str], place: int, name: str) -> float:
    text = _cell(line, row, place, name)
    value = number(text)
    if value is None:
        raise ValueError(f"Line {line}: {name} is {_quote(text)}, not a number.")
    if abs(value) > MAX_COORD:
        raise ValueError(f"Line {line}: {name} is {text[:24]}, outside -{MAX_COORD:g} to {MAX_COORD:g}.")
    return value


def read_csv(data: bytes) -> tuple[tuple[Point, ...], bool, list[str]]:
    """A CSV file's points, whether they are a regression's (a target column), and the labels in class order
    (class k is ``labels[k]``; none for a regression). Raises ValueError: one sentence that names the line.

    Labels may be any text of up to 30 characters; 2 to 6 distinct ones. Labels that are all whole numbers
    are ordered as numbers (0, 1, 2 stay classes 0, 1, 2), others alphabetically."""
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"The file is {len(data):,} bytes; at most {MAX_FILE_BYTES:,} are read.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"The file is not UTF-8 text (byte {exc.start + 1:,} is not); save it as CSV, UTF-8.") \
            from None
    columns, regression, rows = _rows(text)
    if len(rows) < MIN_POINTS:
        raise ValueError(f"The file holds {len(rows)} point{'s' * (len(rows) != 1)}; at least {MIN_POINTS} are "
                         "needed, some to train on and one to test on.")
    value = "target" if regression else "label"
    points, raw = [], []
    for line, row in rows:
        x1, x2 = (_coordinate(line, row, columns[k], k) for k in ("x1", "x2"))
        text = _cell(line, row, columns[value], value)
        if regression:
            target = number(text)
            if target is None or not -1 <= target <= 1:
                raise ValueError(f"Line {line}: the target is {_quote(text)}; a target is a number from -1 to 1 "
                                 "(the colour scale's range, as in TF Playground): scale the column first.")
            points.append((x1, x2, target))
        else:
            if len(text) > MAX_LABEL or not text.isprintable():
                raise ValueError(f"Line {line}: the label {_quote(text)} is longer than {MAX_LABEL} characters "
                                 "or holds control characters.")
            points.append((x1, x2))
            raw.append((line, text))
    if regression:
        return tuple(points), True, []
    labels = _label_order({text for _, text in raw}, raw)
    index = {label: k for k, label in enumerate(labels)}
    return tuple((x1, x2, float(index[text])) for (x1, x2), (_, text) in zip(points, raw, strict=True)), False, labels


def _label_order(distinct: set[str], raw: list[tuple[int, str]]) -> list[str]:
    if len(distinct) < 2:
        raise ValueError(f"Every point has the label {_quote(raw[0][1])}; a classifier needs 2 to {MAX_CLASSES} "
                         "labels.")
    if len(distinct) > MAX_CLASSES:
        seen: set[str] = set()
        for line, text in raw:
            seen.add(text)
            if len(seen) > MAX_CLASSES:
                raise ValueError(f"The file has {len(distinct)} labels; at most {MAX_CLASSES} fit (line {line} "
                                 f"brings a {MAX_CLASSES + 1}th, {_quote(text)}).")
    whole = all(re.fullmatch(r"[+-]?[0-9]{1,9}", t) for t in distinct)
    return sorted(distinct, key=int) if whole else sorted(distinct)
