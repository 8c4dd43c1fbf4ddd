"""The class store: SQLite (the default) and a real redis-server do the same things, across processes."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from studio.room.store import RedisStore, SQLiteStore, open_store


def test_values(store):
    assert store.get("a") is None
    store.put("a", b"1", 60)
    assert store.get("a") == b"1"
    assert not store.put_new("a", b"2", 60) and store.get("a") == b"1"
    assert store.put_new("b", b"2", 60) and store.get("b") == b"2"


def test_a_key_is_gone_when_its_time_is_up(store):
    store.put("short", b"x", 0.2)
    store.push("list", b"x", 0.2)
    assert store.get("short") == b"x" and store.items("list") == [b"x"]
    time.sleep(0.35)
    assert store.get("short") is None and store.items("list") == []
    assert store.put_new("short", b"y", 60)  # an expired key is free again
    assert store.push("list", b"y", 60) == 1


def test_lists_keep_their_order(store):
    assert [store.push("l", str(i).encode(), 60) for i in range(5)] == [1, 2, 3, 4, 5]
    assert store.items("l") == [b"0", b"1", b"2", b"3", b"4"]
    assert store.items("l", 3) == [b"3", b"4"]


def test_a_counter_is_a_fixed_window(store):
    assert [store.count("c", 0.3) for _ in range(3)] == [1, 2, 3]
    time.sleep(0.4)
    assert store.count("c", 0.3) == 1  # the window did not slide with each count


def test_expire_and_drop_take_a_prefix_literally(store):
    for key in ("class:A_1:x", "class:A_1:y", "class:AB1:x"):
        store.put(key, b"v", 60)
    store.push("class:A_1:subs", b"s", 60)
    assert store.drop("class:A_1:") == 3  # "_" is not a wildcard
    assert store.get("class:AB1:x") == b"v" and store.items("class:A_1:subs") == []
    store.put("class:AB1:y", b"v", 60)
    store.expire("class:AB1", 0.2)
    time.sleep(0.35)
    assert store.get("class:AB1:x") is None and store.get("class:AB1:y") is None


_OTHER = """
import sys
from studio.room.store import open_store
s = open_store(sys.argv[1])
for i in range(50):
    s.push("shared", b"%d" % i, 60)
    s.count("n", 60)
print(s.get("from-parent").decode())
"""


def test_two_processes_share_one_store(store):
    spec = store.url if isinstance(store, RedisStore) else f"sqlite:///{store.path}"
    store.put("from-parent", b"hello", 60)
    others = [subprocess.Popen([sys.executable, "-c", _OTHER, spec], stdout=subprocess.PIPE, text=True)
              for _ in range(2)]
    for _ in range(50):
        store.count("n", 60)
    assert [p.communicate(timeout=60)[0].strip() for p in others] == ["hello", "hello"]
    assert all(p.returncode == 0 for p in others)
    assert len(store.items("shared")) == 100
    assert store.count("n", 60) == 151  # no count was lost between the three processes


def test_open_store_reads_its_option(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_STORE", f"sqlite:///{tmp_path}/x.sqlite3")
    assert isinstance(open_store(), SQLiteStore) and open_store().path == f"{tmp_path}/x.sqlite3"
    monkeypatch.setenv("STUDIO_STORE", "")
    monkeypatch.setenv("STUDIO_DATA", str(tmp_path / "data"))
    assert open_store().path == str(tmp_path / "data" / "classes.sqlite3")
    with pytest.raises(ValueError, match="expected redis://"):
        open_store("postgres://x")


def test_a_data_folder_that_cannot_be_made_falls_back(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # a folder under a file cannot be made, even by root
    monkeypatch.setenv("STUDIO_DATA", str(blocker / "data"))
    monkeypatch.delenv("STUDIO_STORE", raising=False)
    store = open_store()
    store.put("k", b"v", 60)
    assert store.get("k") == b"v" and not store.path.startswith(str(blocker))
