"""scripts/install-chromium.sh takes the first way that works, and says which.

The ways this machine cannot take (apt through sudo, no apt at all) run with ``--dry-run`` in a made-up
PATH: stand-ins for ``id``, ``apt-get``, ``sudo`` and the browsers, so the test decides what exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from testkit import browser

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-chromium.sh"
BASH = shutil.which("bash")
APT_INSTALL = "env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium"


def fake_bin(tmp_path: Path, uid: int, *commands: str) -> Path:
    """A folder of stand-in commands: ``id`` prints ``uid``, the others do nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, body in {"id": f"echo {uid}", **{c: "exit 0" for c in commands}}.items():
        (bin_dir / name).write_text(f"#!{BASH}\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def run_script(bin_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, str(SCRIPT), *args], env={"PATH": str(bin_dir), "PYTHON": "py3", **env},
                          capture_output=True, text=True, timeout=30)


def test_an_installed_browser_is_used_as_it_is():
    if browser.find_chromium() is None:
        pytest.skip("no Chromium or Chrome installed here")
    out = subprocess.run([BASH, str(SCRIPT)], capture_output=True, text=True, timeout=30, check=True).stdout
    assert f"using the installed browser {browser.find_chromium()} (nothing to install)" in out


@pytest.mark.parametrize("name", browser.BROWSER_NAMES)
def test_the_script_and_the_tests_find_the_same_browser(tmp_path, monkeypatch, name):
    bin_dir = fake_bin(tmp_path, 1000, name, "apt-get", "sudo")
    result = run_script(bin_dir, "--dry-run")
    assert result.returncode == 0 and "would run" not in result.stdout
    assert f"using the installed browser {bin_dir / name} " in result.stdout
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("STUDIO_CHROMIUM", raising=False)
    assert browser.find_chromium() == str(bin_dir / name)


def test_both_look_for_the_same_names():
    names = re.search(r"^BROWSER_NAMES=\((.*)\)$", SCRIPT.read_text(), re.M).group(1).split()
    assert tuple(names) == browser.BROWSER_NAMES


def test_studio_chromium_wins_and_must_exist(tmp_path, monkeypatch):
    bin_dir = fake_bin(tmp_path, 1000, "chromium")
    mine = fake_bin(tmp_path / "other", 1000) / "id"  # any executable file
    assert f"using the installed browser {mine} " in run_script(bin_dir, STUDIO_CHROMIUM=str(mine)).stdout
    monkeypatch.setenv("STUDIO_CHROMIUM", str(mine))
    assert browser.find_chromium() == str(mine)
    missing = run_script(bin_dir, STUDIO_CHROMIUM=str(tmp_path / "nothing"))
    assert missing.returncode == 1 and "is not an executable file" in missing.stderr


def test_as_root_with_apt_it_installs_the_package(tmp_path):
    result = run_script(fake_bin(tmp_path, 0, "apt-get"), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "installing chromium with apt-get" in result.stdout and "sudo" not in result.stdout
    assert result.stdout.splitlines()[1:] == ["would run: apt-get update -qq", f"would run: {APT_INSTALL}"]


def test_not_root_it_uses_sudo_when_there_is_one(tmp_path):
    result = run_script(fake_bin(tmp_path, 1000, "apt-get", "sudo"), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "with apt-get through sudo" in result.stdout
    assert result.stdout.splitlines()[1:] == ["would run: sudo apt-get update -qq", f"would run: sudo {APT_INSTALL}"]


@pytest.mark.parametrize(("uid", "commands"), [
    (1000, ("apt-get",)),  # Debian without sudo, not root
    (501, ()),  # macOS, Fedora, Arch: no apt-get
    (0, ()),  # root in a container without apt-get
], ids=["no-sudo", "no-apt", "root-no-apt"])
def test_otherwise_playwright_installs_its_own_chromium(tmp_path, uid, commands):
    result = run_script(fake_bin(tmp_path, uid, *commands), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "apt-get cannot be used here" in result.stdout
    assert "would run: py3 -m playwright install chromium" in result.stdout
    assert "apt-get update" not in result.stdout
    assert "the browser tests use Playwright's Chromium" in result.stdout


def test_a_failed_apt_falls_back_to_playwright(tmp_path):
    bin_dir = fake_bin(tmp_path, 0)
    (bin_dir / "apt-get").write_text(f"#!{BASH}\necho 'E: Unable to locate package chromium' >&2\nexit 100\n")
    (bin_dir / "apt-get").chmod(0o755)
    result = run_script(bin_dir)  # for real: the stand-in apt-get fails, as on Ubuntu (chromium is a snap)
    assert "apt-get failed; trying Playwright's Chromium" in result.stdout
    assert result.returncode != 0  # py3 does not exist in the made-up PATH: the error shows, not hidden


def test_an_unknown_argument_is_refused(tmp_path):
    result = run_script(fake_bin(tmp_path, 0), "--yes")
    assert result.returncode == 2 and "usage:" in result.stderr
