"""The sidebar's device, dtype and seed from a link are checked by studio/links.py's Setting, as every
lesson's settings are, and accept exactly what they accepted before: a seed of plain ASCII digits (no sign,
at most 10) up to 2**31 - 1, a dtype by its exact name."""

from __future__ import annotations

import re

import pytest

from autodiff_core import DTYPES
from studio import links, sidebar

SEEDS = ["0", "7", "2147483647", "2147483648", "0000000007", "00000000007", "+5", "-0", "-1", " 7", "7 ", "1e9",
         "0x10", "1_000", "1.0", "", "²", "٣", "１２", "𝟗", "NaN", "9" * 11, "9" * 5000]


@pytest.mark.parametrize("text", SEEDS)
def test_a_seed_is_plain_digits_up_to_the_largest_seed(text):
    wanted = int(text) if re.fullmatch(r"[0-9]{1,10}", text, re.ASCII) and int(text) <= 2**31 - 1 else None
    value, note = sidebar._seed(text)
    assert value == wanted and (note == "") == (wanted is not None)
    if wanted is None:
        assert note.startswith(f"seed {links.echo(text)} in the link is not a whole number from 0 to 2,147,483,647")


@pytest.mark.parametrize("text", [*DTYPES, "Float32", " float32", "float32\x00", "float16", "x" * 100])
def test_a_dtype_is_one_of_the_names(text):
    value, note = sidebar._dtype(text)
    assert value == (text if text in DTYPES else None) and (note == "") == (text in DTYPES)


def test_one_echo_and_one_setting_check_for_links_and_the_sidebar():
    assert sidebar.echo is links.echo and sidebar.ECHO == links.ECHO
    assert isinstance(sidebar.SEED, links.Setting) and isinstance(sidebar.DTYPE, links.Setting)
    plain = links.Setting("n", int, 0, 0, 100)
    digits = links.Setting("n", int, 0, 0, 100, pattern=r"[0-9]+")
    assert plain.parse("+5") == (5, "") and digits.parse("+5")[0] is None and digits.parse("5") == (5, "")
