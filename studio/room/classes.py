"""A class: its join code, its teacher, its students, what they send, and the teacher's questions.

Pure logic over a ``Store`` (``studio.room.store``), without Streamlit, so the same code serves every worker.
Only the teacher key can change the class: it is made when the class starts, given to the teacher's browser
alone, and kept here only as a hash. Everything a student types is bounded plain text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import threading
import time
import unicodedata
from dataclasses import asdict, dataclass, field, replace

from ..process import process_wide
from .store import Store, open_store

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: a code read off a projector is typed right
CODE_LENGTH = 5
IDLE_HOURS = 3  # a class nobody touched for this long ends by itself
KEEP_DAYS = 7  # a class's data is deleted this long after it ended
MAX_STUDENTS = 300
MAX_NAME = 20  # characters in a nickname
MAX_SUBMISSIONS = 2000  # per class
MAX_SUBMISSION_BYTES = 16_000
# characters of one setting a student sends: a Function from lesson 6 travels as its name and packed code, up to
# 8,000 characters (studio.session_functions.MAX_LINK_CODE), so a click on the board can load it whole
MAX_SENT_SETTING = 8_200
JOINS_PER_MINUTE = 10  # per client (browser or address): a join code cannot be guessed by trying
ANSWERS_PER_MINUTE = 20  # per student
MAX_QUESTION = 200  # characters in a question
MAX_CHOICES = 6
MAX_CHOICE = 60  # characters in a choice
OUTCOMES = ("down", "up", "stall", "")  # what a run did: the loss went down, blew up, stalled; "" untold

IDLE = IDLE_HOURS * 3600.0
KEEP = KEEP_DAYS * 86400.0


class ClassError(ValueError):
    """A request the class refuses; its text is the sentence to show the person who made it."""


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    choices: tuple[str, ...] = ()  # empty: the answer is a number
    open: bool = True
    lesson: str = ""
    run_id: str = ""  # the teacher's run the class predicted; "" until it starts
    outcome: dict = field(default_factory=dict)  # what that run did, as the teacher's session saw it (``settle``)


@dataclass(frozen=True)
class Room:
    code: str
    teacher: str  # sha256 of the teacher key
    created: float
    active: float  # last time the teacher or a student did something
    ended: float = 0.0
    names_shown: bool = False
    lesson: str = ""  # the teacher's lesson (registry key) and settings (query parameters), followed by students
    settings: dict = field(default_factory=dict)
    run_id: str = ""  # the teacher's current or last run
    version: int = 0  # goes up with every change a follower's page must redraw for
    question: Question | None = None

    @property
    def over(self) -> bool:
        return bool(self.ended) or time.time() - self.active > IDLE


@dataclass(frozen=True)
class Student:
    code: str
    id: str  # the browser id it joined with
    number: int
    name: str  # "" when anonymous

    @property
    def shown(self) -> str:
        return self.name or f"Student {self.number}"


def _k(code: str, *parts: str) -> str:
    return ":".join(("class", code, *parts))


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def clean_code(text: str) -> str:
    """What a student typed, as a code: upper case, without spaces or dashes; "" when it cannot be one."""
    code = "".join(c for c in str(text).upper() if c not in " -")
    return code if len(code) == CODE_LENGTH and all(c in ALPHABET for c in code) else ""


def plain_text(text, limit: int, what: str) -> str:
    """``text`` as one line of printable characters, at most ``limit`` of them; ClassError otherwise."""
    if not isinstance(text, str):
        raise ClassError(f"The {what} must be text.")
    text = " ".join("".join(c for c in text if unicodedata.category(c)[0] != "C").split())
    if len(text) > limit:
        raise ClassError(f"The {what} is {len(text)} characters long; at most {limit} fit.")
    return text


class Classes:
    """Every class on the store. Reads of a room go through ``room``, which never returns an expired one.

    A change to a room reads it, changes it and writes it back; only the teacher's browser changes it, from its
    page's script runs and from the thread that relays its run (``mirror``), both in one process. Those changes
    take turns (``_changing``): interleaved, one wrote back the room it had read before the other's write, and
    the other's change was lost (the run the class follows, once)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._changing = threading.RLock()

    # ---- the room ----
    def _save(self, room: Room, bump: bool = True) -> Room:
        room = replace(room, active=time.time(), version=room.version + (1 if bump else 0))
        data = asdict(room)
        self.store.put(_k(room.code), json.dumps(data).encode(), KEEP + IDLE)
        return room

    def room(self, code: str) -> Room | None:
        raw = self.store.get(_k(code)) if code else None
        if raw is None:
            return None
        data = json.loads(raw)
        q = data.pop("question")
        return Room(**data, question=None if q is None else Question(**{**q, "choices": tuple(q["choices"])}))

    def live_room(self, code: str) -> Room:
        """The class ``code``, still going; ClassError with the reason otherwise."""
        room = self.room(clean_code(code))
        if room is None:
            raise ClassError("There is no class with that code. Check it on the board, or ask your teacher.")
        if room.over:
            raise ClassError("That class has ended.")
        return room

    def start(self) -> tuple[Room, str]:
        """A new class and its teacher key (given to the teacher's browser alone)."""
        key = secrets.token_urlsafe(24)
        now = time.time()
        for _ in range(20):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            room = Room(code=code, teacher=_hash(key), created=now, active=now)
            if self.store.put_new(_k(code), json.dumps(asdict(room)).encode(), KEEP + IDLE):
                return room, key
        raise ClassError("No free class code was found; try again.")

    def teacher_room(self, code: str, key: str) -> Room:
        """The class, if ``key`` is its teacher key; ClassError otherwise (the same sentence for any wrong key)."""
        room = self.live_room(code)
        if not isinstance(key, str) or not hmac.compare_digest(_hash(key), room.teacher):
            raise ClassError("Only the teacher who started this class can do that.")
        return room

    def lead(self, code: str, key: str, lesson: str, settings: dict, run_id: str | None = None) -> Room:
        """The teacher's lesson, settings and run (None: the run the class follows now), as followers see them.
        Written only when one changed."""
        with self._changing:
            room = self.teacher_room(code, key)
            run_id = room.run_id if run_id is None else run_id
            settings = {str(k): str(v)[:200] for k, v in dict(settings).items()}
            if (room.lesson, room.settings, room.run_id) == (lesson, settings, run_id):
                if time.time() - room.active > 60:  # a teacher at work keeps the class from ending idle
                    return self._save(room, bump=False)
                return room
            question = room.question
            if question is not None and run_id and not question.run_id and run_id != room.run_id:
                question = replace(question, run_id=run_id, open=False)  # the run the class predicted has started
            return self._save(replace(room, lesson=lesson, settings=settings, run_id=run_id, question=question))

    def _change(self, code: str, key: str, **fields) -> Room:
        """The class with ``fields`` changed (none: only its version, so that followers redraw), if ``key`` is its
        teacher key; read and written back in turn with the process's other changes."""
        with self._changing:
            return self._save(replace(self.teacher_room(code, key), **fields))

    def touch(self, code: str, key: str) -> Room:
        """Something the followers' pages show changed (the teacher's run ended): they redraw."""
        return self._change(code, key)

    def show_names(self, code: str, key: str, shown: bool) -> Room:
        return self._change(code, key, names_shown=bool(shown))

    def end(self, code: str, key: str) -> Room:
        """End the class: students can no longer join or send, and its data goes in ``KEEP_DAYS`` days."""
        room = self._change(code, key, ended=time.time())
        self.store.expire(_k(room.code), KEEP)  # a change after this one finds the class over and is refused
        return room

    def delete(self, code: str, key: str) -> int:
        """Delete everything the class holds, now."""
        room = self.room(clean_code(code))
        if room is None or not hmac.compare_digest(_hash(str(key)), room.teacher):
            raise ClassError("Only the teacher who started this class can do that.")
        return self.store.drop(_k(room.code))

    # ---- students ----
    def join(self, code: str, browser: str, client: str, name: str = "") -> Student:
        """``browser`` joins class ``code`` as ``name`` ("" stays anonymous). ``client``: who is asking, for the
        rate limit (the browser's address). Joining again from the same browser keeps its number."""
        if self.store.count(f"limit:join:{client}", 60) > JOINS_PER_MINUTE:
            raise ClassError("Too many tries to join a class from here. Wait a minute, then type the code again.")
        name = plain_text(name, MAX_NAME, "nickname")
        room = self.live_room(code)
        key = _k(room.code, "student", browser)
        raw = self.store.get(key)
        if raw is not None:
            student = replace(Student(**json.loads(raw)), name=name or json.loads(raw)["name"])
        else:
            number = self.store.count(_k(room.code, "students"), KEEP + IDLE)
            if number > MAX_STUDENTS:
                raise ClassError(f"This class is full: it has {MAX_STUDENTS} students.")
            student = Student(code=room.code, id=browser, number=number, name=name)
        self.store.put(key, json.dumps(asdict(student)).encode(), KEEP + IDLE)
        return student

    def student(self, code: str, browser: str) -> Student | None:
        raw = self.store.get(_k(code, "student", browser)) if code and browser else None
        return None if raw is None else Student(**json.loads(raw))

    def head_count(self, code: str) -> int:
        raw = self.store.get(_k(code, "students"))
        return int(raw) if raw else 0

    # ---- what students send ----
    def submit(self, student: Student, code: str, entry: dict) -> dict:
        """Send a finished run to the class board: ``entry`` holds lesson, run_id, settings and figures (numbers).
        A student belongs to one class: sending to another is refused, and each run goes once."""
        if student.code != code or self.student(code, student.id) != student:
            raise ClassError("You can only send to the class you joined.")
        room = self.live_room(code)
        body = json.dumps(_entry(entry, student), allow_nan=False)
        if len(body) > MAX_SUBMISSION_BYTES:
            raise ClassError("This run is too large to send to the class.")
        if not self.store.put_new(_k(room.code, "sent", student.id, str(entry.get("run_id"))), b"1", KEEP + IDLE):
            raise ClassError("You already sent this run to the class.")
        if self.store.push(_k(room.code, "subs"), body.encode(), KEEP + IDLE) > MAX_SUBMISSIONS:
            raise ClassError("The class board is full.")
        self._news(room.code)  # the teacher's board redraws; the students' pages need not
        return json.loads(body)

    def _news(self, code: str) -> None:
        self.store.count(_k(code, "news"), KEEP + IDLE)

    def news(self, code: str) -> int:
        """A number that goes up with every submission and answer: what the teacher's board and question show."""
        raw = self.store.get(_k(code, "news"))
        return int(raw) if raw else 0

    def submissions(self, code: str) -> list[dict]:
        return [json.loads(x) for x in self.store.items(_k(code, "subs"))][:MAX_SUBMISSIONS]

    # ---- questions ----
    def ask(self, code: str, key: str, text: str, choices: list[str] | tuple[str, ...] = (), lesson: str = "") -> Room:
        """Ask the class: ``choices`` to pick from, or none for a number."""
        with self._changing:
            room = self.teacher_room(code, key)  # a wrong key is told so before anything about the question
            text = plain_text(text, MAX_QUESTION, "question")
            choices = tuple(c for c in (plain_text(c, MAX_CHOICE, "choice") for c in choices) if c)
            if not text:
                raise ClassError("Write the question first.")
            if len(choices) > MAX_CHOICES or len(choices) == 1:
                raise ClassError(f"A question has 2 to {MAX_CHOICES} choices, or none for a number.")
            question = Question(id=secrets.token_hex(4), text=text, choices=choices, lesson=lesson)
            return self._save(replace(room, question=question))

    def close_question(self, code: str, key: str) -> Room:
        return self._change(code, key, question=None)

    def answer(self, student: Student, code: str, question_id: str, value) -> None:
        room = self.live_room(code)
        q = room.question
        if student.code != code or self.student(code, student.id) != student:
            raise ClassError("You can only answer in the class you joined.")
        if q is None or q.id != question_id or not q.open:
            raise ClassError("That question is closed: the run has started.")
        if self.store.count(_k(code, "limit", "answer", student.id), 60) > ANSWERS_PER_MINUTE:
            raise ClassError("Too many answers in a minute. Wait a moment.")
        value = _answer(q, value)
        self.store.push(_k(code, "answers", q.id), json.dumps([student.id, value]).encode(), KEEP + IDLE)
        self._news(code)

    def settle(self, code: str, key: str, question_id: str, outcome: dict) -> Room:
        """Record what the run the class predicted did (``outcome``: kind, one of ``OUTCOMES``; first and final
        loss, finite numbers or None; step; one plain sentence), once, for every student's page to show."""
        with self._changing:
            room = self.teacher_room(code, key)
            q = room.question
            if q is None or q.id != question_id or q.open or not q.run_id:
                raise ClassError("That question is not waiting for its run.")
            if q.outcome:
                return room
            room = self._save(replace(room, question=replace(q, outcome=_outcome(outcome))))
        self._news(code)  # the teacher's page shows it too, whichever of its sessions (a reload) is open
        return room

    def answers(self, code: str, question_id: str) -> dict[str, object]:
        """Each student's last answer to the question."""
        last = {}
        for raw in self.store.items(_k(code, "answers", question_id)):
            who, value = json.loads(raw)
            last[who] = value
        return last


def _answer(q: Question, value):
    if q.choices:
        if value not in q.choices:
            raise ClassError("Pick one of the choices.")
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ClassError("The answer is a number.") from None
    if not math.isfinite(number):
        raise ClassError("The answer is a finite number.")
    return number


def _outcome(outcome: dict) -> dict:
    """A run's outcome as the store keeps it: a known kind, finite numbers or None, one bounded sentence."""
    def number(v):
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    kind = outcome.get("kind", "")
    if kind not in OUTCOMES:
        raise ClassError("That is not an outcome a run can have.")
    step = outcome.get("step", 0)
    return {"kind": kind, "first": number(outcome.get("first")), "final": number(outcome.get("final")),
            "step": int(step) if isinstance(step, int) and not isinstance(step, bool) else 0,
            "text": plain_text(str(outcome.get("text", "")), MAX_QUESTION, "outcome")}


def _entry(entry: dict, student: Student) -> dict:
    """What goes on the board: bounded strings and finite numbers only."""
    def number(v):
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    settings = {str(k)[:40]: str(v)[:MAX_SENT_SETTING] for k, v in list(dict(entry.get("settings", {})).items())[:40]}
    figures = {str(k)[:40]: number(v) for k, v in list(dict(entry.get("figures", {})).items())[:20]}
    extra = {str(k)[:40]: str(v)[:200] for k, v in list(dict(entry.get("notes", {})).items())[:20]}
    return {"student": student.id, "number": student.number, "name": student.name,
            "lesson": str(entry.get("lesson", ""))[:40], "run_id": str(entry.get("run_id", ""))[:40],
            "settings": settings, "figures": figures, "notes": extra, "at": time.time()}


def shared() -> Classes:
    """The process's classes, on the store its configuration names (``STUDIO_STORE``): one for every session
    and route of this server process."""
    return process_wide("room_classes", lambda: Classes(open_store()))
