"""The class's own points: a CSV file read and checked line by line, the link's form, the split, erasing."""

import pytest

from autodiff_core.own_data import (
    LINK_CHARS,
    MAX_POINTS,
    link_text,
    nearest,
    parse_link,
    read_csv,
    require_points,
    split_mask,
    starter,
)


def csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_a_file_of_labels_gives_classes_in_order():
    points, regression, labels = read_csv(csv("x1,x2,label", "1,2,cat", "-3.5,0.25,dog", "0,0,cat", "4,4,bird"))
    assert not regression and labels == ["bird", "cat", "dog"]
    assert points == ((1.0, 2.0, 1.0), (-3.5, 0.25, 2.0), (0.0, 0.0, 1.0), (4.0, 4.0, 0.0))


def test_whole_number_labels_keep_their_order_and_columns_may_come_in_any_order():
    points, _, labels = read_csv(csv(" Label , X2,x1, note", "10,1,2,a", "2,3,4,b", "0,5,6,", "2,7,8,c"))
    assert labels == ["0", "2", "10"] and points == ((2.0, 1.0, 2.0), (4.0, 3.0, 1.0), (6.0, 5.0, 0.0),
                                                     (8.0, 7.0, 1.0))


def test_a_target_column_makes_a_regression():
    points, regression, labels = read_csv(csv("x1,x2,target", "1,1,0.5", "2,2,-1", "3,3,1", "4,4,0"))
    assert regression and labels == [] and points[1] == (2.0, 2.0, -1.0)


@pytest.mark.parametrize(("lines", "said"), [
    (("x,y,label", "1,2,a"), 'Line 1 must name the columns x1, x2 and label (or target, for a regression); it holds '
                             '"x", "y", "label".'),
    (("x1,x2,label,target", "1,2,a,1"), "both label and target"),
    (("x1,x2,label", "1,2,a", "2,3,b", "3,4,a", "five,1,b"), 'Line 5: x1 is "five", not a number.'),
    (("x1,x2,label", "1,2,a", "2,3,b", "3,4,a", "nan,1,b"), 'Line 5: x1 is "nan", not a number.'),
    (("x1,x2,label", "1,2,a", "2,3,b", "3,4,a", "١,1,b"), 'Line 5: x1 is "١", not a number.'),
    (("x1,x2,label", "1,2,a", "2,3,b", "3,4,a", "1,1e5,b"), "Line 5: x2 is 1e5, outside -100 to 100."),
    (("x1,x2,label", "1,2,a", "2,3,b", "", "3,4,a", "1,1"), "Line 6 has no label."),
    (("x1,x2,label", "1,2,a", "2,3,b", "3,4,a"), "The file holds 3 points; at least 4 are needed"),
    (("x1,x2,label", "1,2,a", "2,3,a", "3,4,a", "4,4,a"), 'Every point has the label "a"; a classifier needs 2'),
    (("x1,x2,label", *(f"{k},0,L{k}" for k in range(7))), 'The file has 7 labels; at most 6 fit (line 8 brings a '
                                                            '7th, "L6").'),
    (("x1,x2,target", "1,2,0", "2,3,0", "3,4,0", "4,4,3"), 'Line 5: the target is "3"; a target is a number from -1'),
    ((), "The file is empty"),
])
def test_every_problem_is_one_sentence_that_names_the_line(lines, said):
    with pytest.raises(ValueError) as caught:
        read_csv(csv(*lines))
    assert said in str(caught.value)


def test_markup_in_a_label_is_quoted_as_it_is():
    """A label is text: it is kept and quoted as it stands (the page shows it as plain text)."""
    points, _, labels = read_csv(csv("x1,x2,label", "1,2,<b>x</b>", "2,3,**x**", "3,4,<b>x</b>", "4,4,**x**"))
    assert labels == ["**x**", "<b>x</b>"]
    long = "<script>alert(1)</script>" + "x" * 20
    with pytest.raises(ValueError, match='the label "<script>alert'):
        read_csv(csv("x1,x2,label", "1,2,a", "2,3,b", "3,4,a", f"4,4,{long}"))


def test_limits_on_size_rows_and_encoding():
    rows = [f"{i % 50},{i % 7},{i % 2}" for i in range(MAX_POINTS + 1)]
    with pytest.raises(ValueError, match=f"more than {MAX_POINTS:,} points \\(line {MAX_POINTS + 2}\\)"):
        read_csv(csv("x1,x2,label", *rows))
    points, _, _ = read_csv(csv("x1,x2,label", *rows[:MAX_POINTS]))
    assert len(points) == MAX_POINTS
    with pytest.raises(ValueError, match="bytes; at most 256,000 are read"):
        read_csv(b"x1,x2,label\n" + b"1,1,a\n" * 60_000)
    with pytest.raises(ValueError, match="not UTF-8 text \\(byte 13 is not\\)"):
        read_csv(b"x1,x2,label\n\xff,1,a\n")
    assert read_csv("\ufeffx1,x2,label\n1,2,a\n2,2,b\n3,3,a\n4,4,b\n".encode())[2] == ["a", "b"]  # Excel's BOM


def test_the_link_carries_the_very_floats_and_says_when_a_form_is_wrong():
    points = ((1.5, -2.0, 0.0), (0.1, 1 / 3, 2.0), (-0.0, 99.99, 1.0), (1e-7, 3.0, 5.0))
    text = link_text(points)
    assert text.startswith("1.5,-2,0;0.1,0.3333333333333333,2;") and parse_link(text) == points
    assert parse_link("") == ()
    for bad in ("1,2", "1,2,3;4,5", "1,2,x", "1,2,nan", "1,2,1_0"):
        with pytest.raises(ValueError, match="not three numbers"):
            parse_link(bad)
    with pytest.raises(ValueError, match=f"longer than the {LINK_CHARS:,} characters"):
        parse_link("1,1,1;" * 600)


def test_points_are_checked_against_the_lessons_limits():
    require_points(starter(6, False, 0), regression=False)
    require_points(starter(2, True, 0), regression=True)
    with pytest.raises(ValueError, match="point 2 lies outside -100 to 100"):
        require_points(((0.0, 0.0, 0.0), (101.0, 0.0, 1.0)) * 2, regression=False)
    with pytest.raises(ValueError, match="point 1's class 0.5 is not a whole number"):
        require_points(((0.0, 0.0, 0.5),) * 4, regression=False)
    with pytest.raises(ValueError, match="point 3 is not three finite numbers"):
        require_points(((0.0, 0.0, 0.0),) * 2 + ((float("inf"), 0.0, 0.0),) * 2, regression=False)


def test_the_split_keeps_earlier_points_in_place_and_tests_at_least_one():
    a, b = split_mask(40, 0.3, seed=1), split_mask(41, 0.3, seed=1)
    assert a.tolist() == b[:40].tolist() and 5 < int(a.sum()) < 20
    assert split_mask(4, 0.05, seed=0).sum() == 1 and split_mask(4, 0.9, seed=0).sum() <= 3


def test_the_eraser_takes_the_nearest_point_within_reach():
    points = ((0.0, 0.0, 0.0), (1.0, 0.0, 1.0), (5.0, 5.0, 2.0))
    assert nearest(points, 0.8, 0.1, 0.5) == 1 and nearest(points, 3.0, 3.0, 0.5) is None
