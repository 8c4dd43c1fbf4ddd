"""A class on screen (AppTest): the teacher starts one and sees its code, link and QR code; a student joins
from the home page with the code or the link; the teacher ends it."""

from __future__ import annotations

import pytest

from studio.room import panel
from studio.room.classes import ALPHABET, Classes
from studio.room.store import SQLiteStore


@pytest.fixture
def room_store(tmp_path, monkeypatch):
    """Each test's classes on a store of its own."""
    c = Classes(SQLiteStore(tmp_path / "classes.sqlite3"))
    monkeypatch.setattr(panel, "classes", lambda: c)
    return c


def _texts(at) -> str:
    return " ".join(str(m.value) for m in [*at.markdown, *at.sidebar.markdown, *at.code, *at.sidebar.code])


def test_start_a_class_gives_a_code_a_link_and_a_qr_code(room_store, app):
    app.sidebar.button(key="room_start").click().run()
    assert not app.exception
    code, key = app.session_state["room_teacher"]
    assert len(code) == 5 and set(code) <= set(ALPHABET)
    text = _texts(app)
    assert f"/?join={code}" in text and key not in text  # the link never holds the teacher key
    assert room_store.room(code) is not None and not room_store.room(code).over
    (image,) = app.get("image")
    url = image.proto.imgs[0].url
    assert "/media/" in url and url.endswith(".png"), url  # drawn by this server (no CDN), sharp (not JPEG)
    app.sidebar.button(key="room_end").click().run()
    assert room_store.room(code).over and "room_teacher" not in app.session_state
    assert "Start a class" in [b.label for b in app.sidebar.button]


def test_a_student_joins_with_a_code_and_a_nickname(room_store, app):
    room, _ = room_store.start()
    app.text_input(key="room_code").input(room.code.lower()).run()
    app.text_input(key="room_name").input("Ada").run()
    app.button(key="room_join").click().run()
    assert not app.exception and not app.error
    student = app.session_state["room_student"]
    assert (student.code, student.shown) == (room.code, "Ada")
    assert f"In class **{room.code}** as `Ada`" in _texts(app)
    assert room_store.head_count(room.code) == 1


def test_a_join_link_fills_in_the_code(room_store, new_app):
    room, _ = room_store.start()
    at = new_app()
    at.query_params["join"] = room.code
    at.run()
    assert at.text_input(key="room_code").value == room.code
    at.button(key="room_join").click().run()
    assert at.session_state["room_student"].shown == "Student 1"
    assert "join" not in at.query_params


@pytest.mark.parametrize("typed, says", [("ZZZZZ", "no class with that code"), ("AB", "5 letters and digits")])
def test_a_wrong_code_gets_a_sentence(room_store, app, typed, says):
    app.text_input(key="room_code").input(typed).run()
    app.button(key="room_join").click().run()
    assert not app.exception and any(says in e.value for e in app.error)
    assert "room_student" not in app.session_state


def test_delete_this_class_s_data(room_store, app):
    app.sidebar.button(key="room_start").click().run()
    code, _ = app.session_state["room_teacher"]
    app.sidebar.button(key="room_delete").click().run()
    assert room_store.room(code) is None
    assert any("deleted" in s.value for s in app.sidebar.success)


def test_a_link_only_this_computer_can_open_says_so():
    assert panel._local_only("http://localhost:8501/?join=ABCDE") and panel._local_only("http://127.0.0.1:9/?join=A")
    assert not panel._local_only("http://192.168.1.20:8501/?join=ABCDE")
    assert not panel._local_only("https://studio.school.example/?join=ABCDE")


def test_a_store_that_fails_is_one_sentence_and_the_page_goes_on(app, monkeypatch):
    class Down:
        def __getattr__(self, name):
            raise ConnectionError("Error 111 connecting to 10.0.0.10:6379. Connection refused.")

    monkeypatch.setattr(panel, "classes", lambda: Down())
    app.sidebar.button(key="room_start").click().run()
    assert not app.exception
    assert [e.value for e in app.sidebar.error] == [panel.UNAVAILABLE]
    app.session_state["room_teacher"] = ("ABCDE", "key")  # a teacher whose store then went away
    app.run()
    assert not app.exception and panel.UNAVAILABLE in [c.value for c in app.sidebar.caption]
    assert app.title[0].value == "Autograd Studio"  # the page itself still draws


def test_a_nickname_is_shown_as_plain_text_never_as_markdown(room_store, app):
    room, _ = room_store.start()
    app.text_input(key="room_code").input(room.code).run()
    app.text_input(key="room_name").input("**B**[x](http://e.x)").run()
    app.button(key="room_join").click().run()
    line = next(m.value for m in app.sidebar.markdown if "In class" in m.value)
    assert line == f"In class **{room.code}** as `**B**[x](http://e.x)`"  # in a code span: no bold, no link
