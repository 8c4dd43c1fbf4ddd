"""scripts/apt.sh: the apt-get logic (root or sudo, --dry-run) that install-chromium.sh and install-test-deps.sh
share, run in a made-up PATH of stand-in commands (tests/studio/test_install_script.py's ``fake_bin``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.studio.test_install_script import BASH, fake_bin

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def apt(bin_dir: Path, call: str) -> subprocess.CompletedProcess:
    """Source scripts/apt.sh with --dry-run and run ``call``; prints its result code last."""
    script = f'source "{SCRIPTS / "apt.sh"}"; dry_run_arg test.sh --dry-run; {call}; echo "rc=$?"'
    return subprocess.run([BASH, "-c", script], env={"PATH": str(bin_dir)}, capture_output=True, text=True,
                          timeout=30)


@pytest.mark.parametrize(("uid", "commands", "out"), [
    (0, ("apt-get",), "prefix=[]\nrc=0"),
    (1000, ("apt-get", "sudo"), "prefix=[sudo]\nrc=0"),
    (0, (), "prefix=[]\nrc=1"),  # no apt-get
    (1000, ("apt-get",), "prefix=[]\nrc=2"),  # neither root nor sudo
])
def test_apt_prefix_says_how_apt_get_can_run(tmp_path, uid, commands, out):
    result = apt(fake_bin(tmp_path, uid, *commands), 'p=$(apt_prefix); r=$?; echo "prefix=[$p]"; (exit $r)')
    assert result.stdout.strip() == out


def test_apt_install_in_a_dry_run_prints_the_two_commands(tmp_path):
    result = apt(fake_bin(tmp_path, 1000, "apt-get", "sudo"), "apt_install sudo haproxy socat")
    assert result.stdout.splitlines() == [
        "would run: sudo apt-get update -qq",
        "would run: sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        "haproxy socat", "rc=0"]


@pytest.mark.parametrize("name", ["install-chromium.sh", "install-test-deps.sh"])
def test_both_installers_use_the_shared_apt_logic_and_keep_none_of_their_own(name):
    text = (SCRIPTS / name).read_text()
    assert 'source "$here/apt.sh"' in text
    assert not re.search(r"^\s*(apt_prefix|apt_install|run)\s*\(\)", text, re.M)
    assert "id -u" not in text and "apt-get update" not in text


@pytest.mark.parametrize("name", ["install-chromium.sh", "install-test-deps.sh"])
def test_each_runs_from_any_folder_and_refuses_an_unknown_argument(name):
    for cwd, path in ((ROOT, f"scripts/{name}"), (SCRIPTS, name)):  # the README runs them from the root
        result = subprocess.run([BASH, path, "--yes"], cwd=cwd, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2 and f"usage: bash scripts/{name} [--dry-run]" in result.stderr
        result = subprocess.run([BASH, path, "--dry-run"], cwd=cwd, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0 and "would run: sudo" not in result.stdout, result.stderr
