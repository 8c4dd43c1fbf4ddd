"""A student without a browser: loads a page over HTTP, then speaks Streamlit's websocket protocol
(BackMsg / ForwardMsg protobufs on ``/_stcore/stream``) and polls the live feed as the live chart does.

It keeps cookies as a browser would, so it can go through a load balancer that pins sessions by cookie,
and it records which worker answered each request (HAProxy's ``X-Studio-Worker`` header, see
``deploy/haproxy.cfg``). Used by tests/studio/test_proxy.py, and by bench/classroom.py (a class of them).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import urllib.parse
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

WORKER_HEADER = "x-studio-worker"
RUNNING = ("starting", "running", "queued")
GATEWAY = (502, 503, 504)  # the proxy's own answers: the chart waits and asks again


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    wire: int = 0  # bytes of the body as sent (compressed, when the server compressed it)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name.lower()), None)

    def json(self) -> dict:
        return json.loads(self.body)


async def http_get(base: str, path: str, cookies: dict[str, str] | None = None) -> Response:
    """A minimal HTTP/1.1 GET (gzip accepted, as a browser does); headers lower-cased, body decoded."""
    parts = urllib.parse.urlsplit(base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    cookie = "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())
    try:
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept-Encoding: gzip\r\n"
                      + (f"Cookie: {cookie}\r\n" if cookie else "") + "Connection: close\r\n\r\n").encode())
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = [(k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:])]
    response = Response(int(lines[0].split()[1]), headers, body, len(body))
    if response.header("transfer-encoding") == "chunked":
        response.body = _unchunk(body)
    response.wire = len(response.body)
    if response.header("content-encoding") == "gzip":
        response.body = gzip.decompress(response.body)
    return response


def _unchunk(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            break
        out, body = out + rest[:n], rest[n + 2:]
    return out


@dataclass
class Student:
    """One browser tab: its cookies, its websocket session, the widgets its page drew, its live chart."""

    base: str  # http://host:port
    cookies: dict[str, str] = field(default_factory=dict)
    page: str = ""
    query: str = ""  # the page's query string, as the address bar holds it ("lr_iters=60&logistic_speed=max")
    ws: object = None
    widgets: dict = field(default_factory=dict)  # label -> (widget id, element kind)
    fragments: dict = field(default_factory=dict)  # widget id -> the fragment it was drawn in (st.fragment)
    chart_fragment: str = ""  # the fragment the live chart was drawn in ("" outside one)
    finished_as: list = field(default_factory=list)  # how each script run finished (ForwardMsg.ScriptFinishedStatus)
    chart: dict | None = None  # the live chart's data from the latest script run
    titles: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what went wrong on the websocket or the network
    workers: list[str] = field(default_factory=list)  # the worker that answered each request, in order
    gateway: list[Response] = field(default_factory=list)  # the proxy's 502/503/504 answers to feed polls
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    _finished: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task | None = None

    def _took(self, headers) -> None:
        """Keep the cookies a response set, and note which worker sent it."""
        for name, value in headers:
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";")[0].strip()
            elif name.lower() == WORKER_HEADER:
                self.workers.append(value)

    async def load(self, path: str = "/") -> Response:
        """GET the page's HTML, as the browser does before it opens the websocket."""
        response = await http_get(self.base, path, self.cookies)
        self._took(response.headers)
        return response

    async def connect(self) -> None:
        url = self.base.replace("http", "ws", 1) + "/_stcore/stream"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120,
                                           ping_interval=None, additional_headers={"Cookie": cookie})
        self._took(self.ws.response.headers.raw_items())
        self.closed.clear()
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.ws is not None:
            await self.ws.close()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    self._element(msg.delta.new_element, msg.delta.fragment_id)
                elif kind == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self.finished_as.append(msg.script_finished)
                    self._finished.set()
        except websockets.ConnectionClosed:
            pass
        except Exception as exc:  # noted, never fatal to other students sharing the event loop
            self.errors.append(f"websocket: {exc!r}")
        finally:
            self.closed.set()
            self._finished.set()  # nobody waits for a run that can no longer finish

    def _element(self, el, fragment_id: str = "") -> None:
        kind = el.WhichOneof("type")
        if kind == "exception":
            self.exceptions.append(el.exception.message[:200])
        elif kind == "heading" and el.heading.tag == "h1":
            self.titles.append(el.heading.body)
        elif kind in ("button", "slider", "number_input", "selectbox"):
            proto = getattr(el, kind)
            self.widgets[proto.label] = (proto.id, kind)
            self.fragments[proto.id] = fragment_id
        elif kind == "bidi_component" and el.bidi_component.json:
            data = json.loads(el.bidi_component.json)
            if isinstance(data, dict) and "run" in data:  # the live chart (a page may have other components)
                self.chart, self.chart_fragment = data, fragment_id

    async def rerun(self, widgets=(), timeout: float = 300, fragment_id: str = "") -> None:
        """Ask for a script run, as the browser does after a click (only the fragment's, for a widget drawn in
        one, as the browser asks); returns once it finished."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_name = self.page
        state.fragment_id = fragment_id
        for add in widgets:
            add(state.widget_states.widgets.add())
        self._finished.clear()
        await self.ws.send(msg.SerializeToString())
        await asyncio.wait_for(self._finished.wait(), timeout)
        if self.closed.is_set():
            raise ConnectionError("the websocket closed before the script run finished")

    async def open(self, page: str) -> None:
        """Load ``/page``, connect, and run it: a student opening a link."""
        self.page = page
        await self.load(f"/{page}")
        await self.connect()
        await self.rerun()

    async def click(self, label: str) -> None:
        wid, _ = self.widgets[label]

        def add(w):
            w.id, w.trigger_value = wid, True
        await self.rerun([add], fragment_id=self.fragments.get(wid, ""))

    async def set_speed(self, value: str) -> None:
        [wid] = [w for label, (w, kind) in self.widgets.items() if kind == "slider" and label.startswith("Speed")]

        def add(w):
            w.id = wid
            w.string_array_value.data.append(value)
        await self.rerun([add], fragment_id=self.fragments.get(wid, ""))

    async def poll(self, after: int = -1, layout: str = "") -> Response:
        """One request to the live chart's feed (through whatever is in front, with the cookies)."""
        feed = (self.chart or {}).get("feed")
        if not feed:
            raise AssertionError(f"the page gave no feed address: status {(self.chart or {}).get('status')!r}")
        query = urllib.parse.urlencode({"after": after, "layout": layout})
        response = await http_get(self.base, f"{feed}?{query}", self.cookies)
        self._took(response.headers)
        return response

    async def follow(self, every: float = 0.1, on_poll=None, on_response=None) -> tuple[str, int]:
        """Poll the feed as the chart does until the run has ended; (its last status, polls that brought
        new states). A 502/503/504 from the proxy is retried (as the chart does, up to 60 times), and so is a
        failed connection (noted in ``errors``); any other answer but 200 raises FeedError.
        ``on_response(response, seconds)`` sees every answer and how long it took from request to body."""
        data = self.chart or {}
        seq = max((s["seq"] for s in data.get("states") or []), default=-1)
        layout, progress = data.get("layout_id", ""), 0
        while True:
            t0 = time.monotonic()
            try:
                response = await self.poll(seq, layout)
            except OSError as exc:
                self.errors.append(f"feed: {exc!r}")
                if len(self.errors) > 60:
                    raise
                await asyncio.sleep(1)
                continue
            if on_response is not None:
                on_response(response, time.monotonic() - t0)
            if response.status in GATEWAY and len(self.gateway) < 60:  # as the chart: keep asking
                self.gateway.append(response)
                await asyncio.sleep(0.5)
                continue
            if response.status != 200:
                raise FeedError(response)
            body = response.json()
            new = body.get("states") or []
            if new:
                seq, progress = max(seq, max(s["seq"] for s in new)), progress + 1
            layout = body.get("layout_id", layout)
            if body.get("status") not in RUNNING:
                return body.get("status"), progress
            if on_poll is not None:
                on_poll(self)
            await asyncio.sleep(every)


class FeedError(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(f"the feed answered {response.status}: {response.body[:200]!r}")
        self.response = response
