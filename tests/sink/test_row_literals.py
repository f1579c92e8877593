"""The writers' literals read straight from image text (row_codec.raw_literal, the reference, and
core/compiled_literals.pyx, its compiled twin) are the literals of the decoded values
(sql_literal of decode_image's), character for character, for every kind of value an image
holds; a value that has no literal is refused by both alike.  The images of real binlog events
(the type matrix, both readers) are compared in tests/source/test_binlog_readers.py."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from cdcflow.core import row_literals
from cdcflow.core.row_codec import (
    TemporalText,
    decode_image,
    encode_image,
    raw_image,
    raw_literal,
    raw_values,
    sql_literal,
)
from cdcflow.sink.row_writer import RowWriter, StreamingWriter, raw_form
from fake_downstream import FakeConn

D = decimal.Decimal
UTC8 = dt.timezone(dt.timedelta(hours=8))
VALUES = [
    None, True, False, 0, 1, -1, 2**63 - 1, -2**63, 18446744073709551615,
    0.0, -0.0, 1.5, 1e300, -2.2250738585072014e-308, 5e-324, 1 / 3,
    "", "plain", "o'k", 'a"b', "back\\slash", "nul\0byte", "line\nfeed", "cr\rhere", "ctrl-z\x1a", "tab\t",
    "中文", "emoji 😀", "'\\\"\0\n\r\x1a all of them", "%_ like chars", " trailing ",
    D("0"), D("-0.00"), D("12.30"), D("1E-8"), D("0E-10"), D("-1.5E+3"), D("99999999999999999999999999.999999"),
    D("1E+2"),
    b"", b"\x00", bytes(range(256)), "ä".encode("latin1"),
    dt.datetime(2026, 1, 1), dt.datetime(2026, 11, 28, 13, 37, 0, 1), dt.datetime(1, 1, 1),
    dt.datetime(999, 12, 31, 23, 59, 59, 999999), dt.datetime(2026, 1, 1, 8, tzinfo=UTC8),
    dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=dt.timezone.utc),
    dt.date(2026, 2, 28), dt.date(1, 1, 1), dt.date(9999, 12, 31),
    TemporalText("0000-00-00"), TemporalText("0000-00-00 00:00:00"), TemporalText("2000-00-15 10:00:00.123"),
    dt.timedelta(0), dt.timedelta(hours=-838, minutes=-59, seconds=-59), dt.timedelta(days=34, microseconds=5),
    frozenset(), frozenset({"a"}), frozenset({"b", "a", "it's"}),
    {"k": [1, "x", None]}, [1, 2.5, "'"], {"nested": {"q": "\"\\"}},
]
NO_LITERAL = [math.nan, math.inf, -math.inf]


def implementations():
    """Both, by name; not skipped when the compiled one is missing: make setup builds it, and a
    missing build fails here."""
    from cdcflow.core import compiled_literals  # lazy: a module make setup builds
    return [("reference", raw_literal, raw_values),
            ("compiled", compiled_literals.literal, compiled_literals.values)]


@pytest.mark.parametrize("name,literal,values", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_value_has_the_decoded_value_s_literal(name, literal, values):
    image = {f"c{i}": v for i, v in enumerate(VALUES)}
    text = encode_image(image)
    want = {c: sql_literal(v) for c, v in decode_image(text).items()}
    raw = raw_image(text)
    got = {c: literal(v) for c, v in raw.items()}
    assert got == want
    columns = tuple(reversed(raw))
    assert values(raw, columns) == "(" + ", ".join(want[c] for c in columns) + ")"


@pytest.mark.parametrize("name,literal,values", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_value_without_a_literal_is_refused_alike(name, literal, values):
    for v in NO_LITERAL:
        raw = raw_image(encode_image({"f": v}))
        with pytest.raises(ValueError, match="no literal for the float"):
            sql_literal(decode_image(encode_image({"f": v}))["f"])
        with pytest.raises(ValueError, match="no literal for the float"):
            literal(raw["f"])


@pytest.mark.parametrize("name,literal,values", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_an_unknown_tag_is_refused_alike(name, literal, values):
    with pytest.raises(ValueError, match="unknown row-image tag 'zz'"):
        literal({"zz": "1"})


def test_the_writers_use_the_compiled_literals_unless_asked_not_to(monkeypatch):
    from cdcflow.core import compiled_literals  # lazy: as implementations()

    row_literals.implementation.cache_clear()
    try:
        assert row_literals.implementation()[0] is compiled_literals.literal
        row_literals.implementation.cache_clear()
        monkeypatch.setenv("CDCFLOW_ROW_LITERALS", "python")
        assert row_literals.implementation()[0] is raw_literal
    finally:
        row_literals.implementation.cache_clear()


def test_a_streaming_writer_on_raw_images_writes_the_statements_of_decoded_ones():
    """The same final changes through StreamingWriter, as decoded images (the old form) and as
    raw ones with the compiled literals: the same statements, byte for byte."""
    rows = [(kind, {"id": i, "k2": i % 3, "v": VALUES[i % len(VALUES)], "w": VALUES[(i * 7) % len(VALUES)]})
            for i, kind in enumerate("IUDUIDUU" * 30)]
    texts = [(kind, encode_image(img)) for kind, img in rows]
    keys = {"db.t": ["id", "k2"]}
    out = []
    for form, image_of in ((None, decode_image), (raw_form(), raw_image)):
        conn = FakeConn()
        w = StreamingWriter(RowWriter(conn, 7) if form is None else RowWriter(conn, 7, form=form), keys)
        for kind, text in texts:
            w.add("db", "t", kind, image_of(text))
        w.close()
        out.append(conn.sql)
    assert out[0] == out[1] and len(out[0]) > 10
