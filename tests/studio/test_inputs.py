"""What students type: every message is a sentence, and their text is shown, never rendered."""

import pytest

from studio.inputs import parse_vector


@pytest.mark.parametrize("text", ["", "1, two", "1e400", "nan", ", ".join(["1"] * 40), "-3e7"])
@pytest.mark.parametrize("name", ["the input", "the points", "grad_output"])
def test_messages_start_with_a_capital_and_read_as_sentences(text, name):
    values, message = parse_vector(text, name=name, max_values=16)
    assert values is None and message[0] in "'" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ", message
    assert not message.startswith(name) and "the points takes" not in message and message.endswith(".")


def test_student_text_in_a_message_is_escaped_markdown():
    _, message = parse_vector("1, [click](http://example.com)", name="the input")
    assert "[click](" not in message and "\\[click\\]" in message
