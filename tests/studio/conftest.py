"""Fixtures of the class tests: a real redis-server for the module, and each store (SQLite, Redis) in turn."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from studio.room.store import RedisStore, SQLiteStore

REDIS = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    if REDIS is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is missing: scripts/install-test-deps.sh installs it")
        pytest.skip("redis-server is not installed (scripts/install-test-deps.sh)")
    port = _free_port()
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path_factory.mktemp("redis"))], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            RedisStore(url)
            break
        except Exception:
            if time.monotonic() > deadline:
                proc.kill()
                raise
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(params=["sqlite", "redis"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "classes.sqlite3")
    s = RedisStore(request.getfixturevalue("redis_url"))
    s.r.flushdb()
    return s
