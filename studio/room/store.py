"""Where a class lives: a small store of values, lists and counters, each with a time to live.

A class spans browser sessions, and with ``python -m studio.serve`` it spans processes, so it cannot live in
one process's memory. Two stores do the same things behind one interface:

- ``SQLiteStore`` (the default): a file in the data folder, in WAL mode, so that every worker on one machine
  reads and writes the same classes. Nothing else to install or run.
- ``RedisStore``: when workers span machines. ``STUDIO_STORE=redis://host:6379/0`` chooses it (docs/deploy.md).

Keys are plain strings (``class:ABCDE:subs``); values are bytes. Every key has a time to live, so nothing
is kept forever: a read never sees an expired key, and expired rows are swept out as writes go on.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

SWEEP_EVERY = 60.0  # seconds between sweeps of expired SQLite rows


class Store:
    """The operations a class needs. ``ttl``: seconds until the key is gone."""

    def get(self, key: str) -> bytes | None:
        raise NotImplementedError

    def put(self, key: str, value: bytes, ttl: float) -> None:
        raise NotImplementedError

    def put_new(self, key: str, value: bytes, ttl: float) -> bool:
        """Write ``value`` only if ``key`` holds nothing; whether it was written."""
        raise NotImplementedError

    def push(self, key: str, value: bytes, ttl: float) -> int:
        """Append ``value`` to the list at ``key`` (the list's time to live starts again); the list's length."""
        raise NotImplementedError

    def items(self, key: str, start: int = 0) -> list[bytes]:
        """The list at ``key`` from index ``start`` on."""
        raise NotImplementedError

    def count(self, key: str, ttl: float) -> int:
        """Add one to the counter at ``key`` and return it. Its time to live starts when it is created and is
        not extended: a counter is a fixed window, which is what a rate limit needs."""
        raise NotImplementedError

    def expire(self, prefix: str, ttl: float) -> None:
        """Every key that starts with ``prefix`` is gone ``ttl`` seconds from now."""
        raise NotImplementedError

    def drop(self, prefix: str) -> int:
        """Delete every key that starts with ``prefix`` now; how many there were."""
        raise NotImplementedError


class SQLiteStore(Store):
    """The store in one SQLite file, shared by every process on the machine (WAL mode)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._swept = 0.0
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB, expires REAL NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS lst (key TEXT NOT NULL, idx INTEGER NOT NULL, value BLOB, "
                       "expires REAL NOT NULL, PRIMARY KEY (key, idx))")

    def _tx(self) -> _Transaction:
        db = getattr(self._local, "db", None)
        if db is None:  # one connection per thread: sqlite3's connections are not shared between threads
            db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return _Transaction(db)

    def _db(self) -> sqlite3.Connection:
        return self._tx().db

    def get(self, key):
        # A read is one statement, outside any transaction: in WAL mode it sees the last commit and never waits
        # for a writer (an IMMEDIATE transaction would queue behind every write of every process).
        row = self._db().execute("SELECT value FROM kv WHERE key = ? AND expires > ?", (key, time.time())).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key, value, ttl):
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?, ?)", (key, value, time.time() + ttl))
        self._sweep()

    def put_new(self, key, value, ttl):
        now = time.time()
        with self._tx() as db:
            db.execute("DELETE FROM kv WHERE key = ? AND expires <= ?", (key, now))
            done = db.execute("INSERT OR IGNORE INTO kv VALUES (?, ?, ?)", (key, value, now + ttl)).rowcount
        return done == 1

    def push(self, key, value, ttl):
        now = time.time()
        with self._tx() as db:
            db.execute("DELETE FROM lst WHERE key = ? AND expires <= ?", (key, now))
            n = db.execute("SELECT COUNT(*) FROM lst WHERE key = ?", (key,)).fetchone()[0]
            db.execute("INSERT INTO lst VALUES (?, ?, ?, ?)", (key, n, value, now + ttl))
            db.execute("UPDATE lst SET expires = ? WHERE key = ?", (now + ttl, key))
        self._sweep()
        return n + 1

    def items(self, key, start=0):
        rows = self._db().execute("SELECT value FROM lst WHERE key = ? AND idx >= ? AND expires > ? ORDER BY idx",
                                  (key, start, time.time())).fetchall()  # one statement: see ``get``
        return [bytes(r[0]) for r in rows]

    def count(self, key, ttl):
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT value FROM kv WHERE key = ? AND expires > ?", (key, now)).fetchone()
            n = 1 if row is None else int(row[0]) + 1
            if row is None:
                db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?, ?)", (key, b"1", now + ttl))
            else:
                db.execute("UPDATE kv SET value = ? WHERE key = ?", (str(n).encode(), key))
        return n

    def expire(self, prefix, ttl):
        until, pattern = time.time() + ttl, _like(prefix)
        with self._tx() as db:
            for table in ("kv", "lst"):
                db.execute(f"UPDATE {table} SET expires = ? WHERE key LIKE ? ESCAPE '\\'", (until, pattern))

    def drop(self, prefix):
        pattern = _like(prefix)
        with self._tx() as db:
            n = db.execute("DELETE FROM kv WHERE key LIKE ? ESCAPE '\\'", (pattern,)).rowcount
            m = db.execute("SELECT COUNT(DISTINCT key) FROM lst WHERE key LIKE ? ESCAPE '\\'", (pattern,)).fetchone()[0]
            db.execute("DELETE FROM lst WHERE key LIKE ? ESCAPE '\\'", (pattern,))
        return n + m

    def _sweep(self) -> None:
        now = time.time()
        if now - self._swept < SWEEP_EVERY:
            return
        self._swept = now
        with self._tx() as db:
            db.execute("DELETE FROM kv WHERE expires <= ?", (now,))
            db.execute("DELETE FROM lst WHERE expires <= ?", (now,))


class _Transaction:
    """``with`` a connection: one IMMEDIATE transaction (a writer waits for the others, never fails half-way)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, *_) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _like(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class RedisStore(Store):
    """The store in Redis, for workers on several machines."""

    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.r = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.r.ping()  # a wrong address fails here, at start-up, with Redis's own message

    @staticmethod
    def _ms(ttl: float) -> int:
        return max(1, int(ttl * 1000))

    def get(self, key):
        return self.r.get(key)

    def put(self, key, value, ttl):
        self.r.set(key, value, px=self._ms(ttl))

    def put_new(self, key, value, ttl):
        return bool(self.r.set(key, value, px=self._ms(ttl), nx=True))

    def push(self, key, value, ttl):
        with self.r.pipeline() as p:
            p.rpush(key, value)
            p.pexpire(key, self._ms(ttl))
            n, _ = p.execute()
        return int(n)

    def items(self, key, start=0):
        return list(self.r.lrange(key, start, -1))

    def count(self, key, ttl):
        with self.r.pipeline() as p:
            p.incr(key)
            p.pexpire(key, self._ms(ttl), nx=True)
            n, _ = p.execute()
        return int(n)

    def _keys(self, prefix: str):
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in prefix)
        return self.r.scan_iter(match=escaped + "*", count=500)

    def expire(self, prefix, ttl):
        for key in self._keys(prefix):
            self.r.pexpire(key, self._ms(ttl))

    def drop(self, prefix):
        keys = list(self._keys(prefix))
        return int(self.r.delete(*keys)) if keys else 0


def data_folder() -> Path:
    """Where the SQLite store lives: ``STUDIO_DATA``, else ``$XDG_DATA_HOME/autograd-studio`` (or
    ``~/.local/share/autograd-studio``); where that cannot be written (a read-only home), a folder in the
    system's temporary directory, which the log names."""
    named = os.environ.get("STUDIO_DATA")
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "autograd-studio"
    for folder in ([Path(named)] if named else [base]):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".writable"
            probe.write_bytes(b"")
            probe.unlink()
            return folder
        except OSError as exc:
            log.warning("the data folder %s cannot be written (%s); classes are kept in the temporary folder",
                        folder, exc)
    folder = Path(tempfile.gettempdir()) / f"autograd-studio-{os.getuid() if hasattr(os, 'getuid') else 'data'}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_store(spec: str | None = None) -> Store:
    """The store ``spec`` names (default: the ``STUDIO_STORE`` variable): ``redis://…`` or ``rediss://…`` for
    Redis, ``sqlite:///path/to/file`` for that SQLite file, empty for ``classes.sqlite3`` in the data folder."""
    spec = (os.environ.get("STUDIO_STORE", "") if spec is None else spec).strip()
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec)
    if spec.startswith("sqlite:///"):
        return SQLiteStore(spec[len("sqlite:///"):])  # sqlite:///relative/file, sqlite:////absolute/file
    if spec:
        raise ValueError(f"STUDIO_STORE={spec!r}: expected redis://host:port/db or sqlite:///path")
    return SQLiteStore(data_folder() / "classes.sqlite3")
