"""scripts/install-test-deps.sh installs axe-core (for tests/browser/test_accessibility.py) from npm: the version
package.json pins, which package-lock.json locks; nothing when that version is there; without npm it says so,
and under CI=true it fails. Run on a copy of the scripts in a made-up root and PATH (``fake_bin``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.studio.test_install_script import BASH, fake_bin

ROOT = Path(__file__).resolve().parents[2]
NPM_CI = "would run: npm ci --no-audit --no-fund --ignore-scripts --loglevel=error"


def pinned() -> str:
    return json.loads((ROOT / "package.json").read_text())["devDependencies"]["axe-core"]


def test_axe_core_is_pinned_to_one_version_and_locked():
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned())  # no range: every install is the same axe
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/axe-core"]["version"] == pinned()
    assert lock["packages"]["node_modules/axe-core"]["integrity"].startswith("sha512-")


@pytest.fixture
def copy(tmp_path) -> Path:
    """A root with the two scripts and package.json, nothing installed."""
    (tmp_path / "root" / "scripts").mkdir(parents=True)
    for name in ("install-test-deps.sh", "apt.sh"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "root" / "scripts" / name)
    shutil.copy(ROOT / "package.json", tmp_path / "root" / "package.json")
    return tmp_path / "root"


def run(copy: Path, bin_dir: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, str(copy / "scripts" / "install-test-deps.sh"), "--dry-run"],
                          env={"PATH": str(bin_dir), **env}, capture_output=True, text=True, timeout=30)


def test_with_npm_it_runs_npm_ci_in_the_root(copy, tmp_path):
    result = run(copy, fake_bin(tmp_path, 1000, "npm", "haproxy", "bwrap", "redis-server"))
    assert result.returncode == 0, result.stderr
    assert f"axe-core {pinned()}: npm ci" in result.stdout and NPM_CI in result.stdout


def test_the_pinned_version_already_there_is_kept(copy, tmp_path):
    axe = copy / "node_modules" / "axe-core"
    axe.mkdir(parents=True)
    (axe / "package.json").write_text(json.dumps({"name": "axe-core", "version": pinned()}, indent=2))
    result = run(copy, fake_bin(tmp_path, 1000, "npm", "haproxy", "bwrap", "redis-server"))
    assert f"axe-core {pinned()}: already installed" in result.stdout and "npm ci" not in result.stdout
    (axe / "package.json").write_text(json.dumps({"name": "axe-core", "version": "1.0.0"}, indent=2))
    assert NPM_CI in run(copy, fake_bin(tmp_path, 1000, "npm", "haproxy", "bwrap", "redis-server")).stdout


def test_without_npm_it_says_so_and_fails_only_under_ci(copy, tmp_path):
    bin_dir = fake_bin(tmp_path, 1000, "haproxy", "bwrap", "redis-server")
    result = run(copy, bin_dir)
    assert result.returncode == 0 and "no npm here" in result.stderr
    assert run(copy, bin_dir, CI="true").returncode == 1
