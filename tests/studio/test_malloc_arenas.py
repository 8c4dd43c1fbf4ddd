"""The server limits glibc's malloc arenas (studio.boot.limit_malloc_arenas): threads that allocate do not
each get an arena of their own, where what they freed would stay scattered after a class has gone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Eight threads allocate and free at the same time; then glibc's malloc_stats() lists one "Arena N:" per arena.
SCRIPT = """
import ctypes, sys, threading
sys.path.insert(0, {root!r})
if sys.argv[1] == "limit":
    from studio.boot import limit_malloc_arenas
    assert limit_malloc_arenas()
start = threading.Barrier(8)
def work():
    start.wait()
    for _ in range(200):
        blocks = [bytearray(64_000) for _ in range(20)]
        del blocks
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL("libc.so.6").malloc_stats()
"""


def arenas(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT)), mode], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True)
    return sum(line.startswith("Arena ") for line in out.stderr.splitlines())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_threads_share_at_most_two_arenas():
    assert arenas("limit") <= 2 < arenas("default")


def test_the_environment_decides_when_it_says(monkeypatch):
    from studio import boot

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert not boot.limit_malloc_arenas()
