"""The writers' literals read straight from image text (row_codec.raw_literal, the reference, and
sink/compiled_literals.pyx, its compiled twin: `literal` of one value, `scan` of a whole image's
text) are the literals of the decoded values (sql_literal of decode_image's), character for
character, for every kind of value an image holds; a value that has no literal is refused by
all alike.  The images of real binlog events (the type matrix, both readers) are compared in
tests/source/test_binlog_readers.py."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from cdcflow.core.row_codec import (
    TemporalText,
    decode_image,
    encode_image,
    raw_image,
    raw_literal,
    raw_values,
    sql_literal,
)
from cdcflow.sink import row_literals
from cdcflow.sink.row_writer import DECODED, RAW, RowWriter, StreamingWriter, raw_form
from fake_downstream import FakeConn

D = decimal.Decimal
UTC8 = dt.timezone(dt.timedelta(hours=8))
VALUES = [
    None, True, False, 0, 1, -1, 2**63 - 1, -2**63, 18446744073709551615,
    0.0, -0.0, 1.5, 1e300, -2.2250738585072014e-308, 5e-324, 1 / 3,
    "", "plain", "o'k", 'a"b', "back\\slash", "nul\0byte", "line\nfeed", "cr\rhere", "ctrl-z\x1a", "tab\t",
    "中文", "emoji 😀", "'\\\"\0\n\r\x1a all of them", "%_ like chars", " trailing ",
    # a text of one byte a character beyond ASCII (latin-1's range), alone and with escapes: the
    # scanner's loops run once per width of character (compiled_literals' chars)
    "café ÿ", "ä'\\\"\n ÿ",
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
    from cdcflow.sink import compiled_literals  # lazy: a module make setup builds
    return [("reference", raw_literal), ("compiled", compiled_literals.literal)]


def scanned():
    from cdcflow.sink import compiled_literals  # lazy: as implementations()
    return compiled_literals


@pytest.mark.parametrize("name,literal", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_value_has_the_decoded_value_s_literal(name, literal):
    text = encode_image({f"c{i}": v for i, v in enumerate(VALUES)})
    want = {c: sql_literal(v) for c, v in decode_image(text).items()}
    assert {c: literal(v) for c, v in raw_image(text).items()} == want


def test_a_scanned_image_has_the_reference_s_literals():
    """scan: the VALUES tuple over every column, in the image's order and in any other, and each
    column's literal, as the reference gives them; each value alone and beside others, so that
    every kind is read where it starts, in the middle and at the end of an image."""
    c = scanned()
    images = [{f"c{i}": v for i, v in enumerate(VALUES)}, {"only": None}, {"a": "x", "é名`\"q": 1},
              {"café": "ÿ", "b": 2}, {"名": "x", "b": "ä"}, {"😀": 1, "b": "名"}]
    images += [{"a": v} for v in VALUES] + [{"a": v, "b": 7, "z": v} for v in VALUES]
    for image in images:
        text = encode_image(image)
        raw, img = raw_image(text), c.scan(text)
        assert img.names == tuple(raw) and img.text == text
        for columns in (img.names, tuple(reversed(raw))):
            assert c.image_values([img], columns) == [raw_values(raw, columns)], text
        for column in raw:
            assert c.image_literals([img], column) == [raw_literal(raw[column])] == [img[column]]


def test_wide_images_and_long_values_read_as_the_reference_reads_them():
    """More columns than the scanner keeps on its stack (the reference's reading) and a VALUES text
    longer than its stack buffer (built on the heap): the same tuples."""
    c = scanned()
    for image in ({f"c{i}": i for i in range(600)}, {"id": 1, "long": "x'" * 6000, "tail": "é" * 3000}):
        text = encode_image(image)
        raw = raw_image(text)
        img = c.scan(text)
        assert img.names == tuple(raw)
        assert c.image_values([img], img.names) == [raw_values(raw, tuple(raw))]


def test_images_of_one_shape_share_one_names_tuple():
    """StreamingWriter groups rows by their names tuple; scan hands out one object per list of
    names, so the VALUES tuples over it are taken whole."""
    c = scanned()
    a, b = c.scan('{"id":1,"v":"x"}'), c.scan('{"id":2,"v":"y"}')
    other = c.scan('{"id":3}')
    again = c.scan('{"id":4,"v":null}')
    assert a.names is b.names is again.names and other.names == ("id",)
    assert c.image_values([a, b, again], a.names) == ["(1, 'x')", "(2, 'y')", "(4, NULL)"]


def test_text_the_scanner_does_not_read_in_place_takes_the_reference_s_reading():
    """Spellings row_codec never writes (spaces, escapes in names, -0, big integers) are read as
    msgspec reads them, with the reference's literals; so are JSON's escapes in text
    (surrogate pairs, \\/, \\b, \\f, control characters), which the scanner unescapes itself."""
    c = scanned()
    for text in ['{ "a" : 1 }', '{"a\\u00e9":1}', '{"a":1e3,"b":-0,"c":123456789012345678901234}',
                 '{"a":{"d":"1E+2"}}', '{"a":{"set":["x","y\'"]}}', '{"a":"tab\\there"}',
                 '{"a":"\\ud83d\\ude00 \\u00e9\\/\\b\\f\\u001a\\u0000\\"\\\\\'"}', '{"a":{"j":"{\\"k\\":\\"\\u00e9\\"}"}}',
                 '{"a":{"t":"\\u0031:00"},"b":{"dt":"2026-01-01\\u002000:00:00.000000"}}']:
        raw = raw_image(text)
        assert c.image_values([c.scan(text)], tuple(raw)) == [raw_values(raw, tuple(raw))], text


FLOAT_SPELLINGS = ["0.0", "-0.0", "1.5", "1e5", "1E5", "1e+05", "1e-05", "-1.25e-300", "1.7976931348623157e308",
                   "5e-324", "2e-324", "1e-400", "0.1", "0.30000000000000004", "9007199254740993.0", "0e0", "-0e-0",
                   "1.00000000000000011102230246251565404236316680908203125", "1" * 39 + ".0", "1" * 41 + ".0"]


def test_floats_are_read_in_place_as_the_reference_reads_them():
    """A JSON float (a fraction or an exponent) is read in C with float's own reading and repr:
    the same literal as raw_literal of msgspec's float, on edge spellings (the smallest
    subnormal and below, the largest double, 17 digits and more, tokens longer than the
    scanner reads) and on random doubles and decimal spellings."""
    import random
    import struct

    c, rng = scanned(), random.Random(20261129)
    tokens = list(FLOAT_SPELLINGS)
    for _ in range(2000):
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            tokens.append(repr(x))
        tokens.append(f"{rng.randint(0, 999)}.{rng.randint(0, 10 ** rng.randint(1, 25))}e{rng.randint(-330, 300)}")
    for token in tokens:
        text = '{"k":1,"f":' + token + '}'
        raw = raw_image(text)
        assert c.image_values([c.scan(text)], tuple(raw)) == [raw_values(raw, tuple(raw))], token


def test_a_float_past_a_double_is_refused_as_the_reference_refuses_it():
    c = scanned()
    for text in ['{"f":2e308}', '{"f":-1e999}']:
        with pytest.raises(ValueError) as want:
            raw_image(text)
        with pytest.raises(ValueError) as got:
            c.scan(text)
        assert str(got.value) == str(want.value)


def test_an_escape_json_does_not_allow_is_refused_as_the_reference_refuses_it():
    """Lone or unpaired surrogates, an unknown escape: msgspec's error, from scan as from raw_image."""
    c = scanned()
    for text in ['{"a":"\\ud800x"}', '{"a":"\\udc00"}', '{"a":"\\ud800\\u0041"}', '{"a":"\\q"}']:
        with pytest.raises(ValueError) as want:
            raw_image(text)
        with pytest.raises(ValueError) as got:
            c.scan(text)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,literal", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_value_without_a_literal_is_refused_alike(name, literal):
    for v in NO_LITERAL:
        raw = raw_image(encode_image({"f": v}))
        with pytest.raises(ValueError, match="no literal for the float"):
            sql_literal(decode_image(encode_image({"f": v}))["f"])
        with pytest.raises(ValueError, match="no literal for the float"):
            literal(raw["f"])


def test_a_scanned_value_without_a_literal_is_refused_when_its_literal_is_asked():
    """As the reference refuses it when the statement is built, not when the image is read."""
    c = scanned()
    for text in [encode_image({"k": 1, "f": math.nan}), '{"k":1,"f":{"zz":"1"}}']:
        img = c.scan(text)
        for ask in (lambda: c.image_values([img], img.names), lambda: c.image_literals([img], "k")):
            with pytest.raises(ValueError, match="no literal for the float|unknown row-image tag 'zz'"):
                ask()


@pytest.mark.parametrize("name,literal", implementations(), ids=lambda x: x if isinstance(x, str) else "")
def test_an_unknown_tag_is_refused_alike(name, literal):
    with pytest.raises(ValueError, match="unknown row-image tag 'zz'"):
        literal({"zz": "1"})


def test_the_writers_use_the_compiled_literals_unless_asked_not_to(monkeypatch):
    row_literals.compiled.cache_clear()
    try:
        assert raw_form().read is scanned().scan
        row_literals.compiled.cache_clear()
        monkeypatch.setenv("CDCFLOW_ROW_LITERALS", "python")
        assert raw_form() is RAW
    finally:
        row_literals.compiled.cache_clear()


def test_a_streaming_writer_on_raw_images_writes_the_statements_of_decoded_ones():
    """The same final changes through StreamingWriter, as decoded images (the old form), as raw
    ones (the reference) and as scanned ones: the same statements, byte for byte."""
    rows = [(kind, {"id": i, "k2": i % 3, "v": VALUES[i % len(VALUES)], "w": VALUES[(i * 7) % len(VALUES)]})
            for i, kind in enumerate("IUDUIDUU" * 30)]
    texts = [(kind, encode_image(img)) for kind, img in rows]
    keys = {"db.t": ["id", "k2"]}
    out = []
    assert raw_form() not in (DECODED, RAW)
    for form in (DECODED, RAW, raw_form()):
        conn = FakeConn()
        w = StreamingWriter(RowWriter(conn, 7, form=form), keys)
        for kind, text in texts:
            w.add("db", "t", kind, form.read(text))
        w.close()
        out.append(conn.sql)
    assert out[0] == out[1] == out[2] and len(out[0]) > 10


def test_a_writers_texts_read_where_the_part_holds_them_are_the_taken_ones(monkeypatch):
    """row_literals.texts: the compiled reading of images straight from the part's arrays gives what
    the reference (take, then to_pylist) gives, over chunks sliced, empty and with nulls, numbers in
    any order and a slice of them, texts of every width; a number past the images is refused."""
    import pyarrow as pa

    words = [encode_image({"id": i, "v": v}) for i, v in enumerate(VALUES[16:32])] + ["", "中文 😀", "ÿ"]
    whole = pa.array(words + [None] + words[::-1], pa.string())
    chunks = [whole.slice(0, 5), whole.slice(5, 0), whole.slice(5, 14), pa.array([], pa.string()),
              whole.slice(19), pa.array(["tail"], pa.string())]
    images = pa.chunked_array(chunks, pa.string())
    n = len(images)
    order = pa.array([n - 1, 0, 19, 5, 18, 4, 7, 7, 30, 1, 20, 39, 25, 3], pa.int64())
    sources = [order, order.slice(3, 8), pa.array(list(range(n)), pa.int64()), pa.array([], pa.int64())]
    compiled = scanned()
    for numbers in sources:
        expected = images.take(numbers).to_pylist()
        assert compiled.texts(images.chunks, numbers) == expected
        assert row_literals.texts(images, numbers) == expected
    assert None in compiled.texts(images.chunks, sources[2]) and "中文 😀" in compiled.texts(images.chunks, sources[2])
    with pytest.raises(IndexError, match=f"image number {n} of {n}"):
        compiled.texts(images.chunks, pa.array([0, n], pa.int64()))
    with pytest.raises(TypeError, match="not string"):
        compiled.texts([pa.array([b"x"], pa.binary())], pa.array([0], pa.int64()))
    with pytest.raises(TypeError, match="not int64"):
        compiled.texts(images.chunks, pa.array([0], pa.int32()))
    row_literals.compiled.cache_clear()
    try:
        monkeypatch.setenv("CDCFLOW_ROW_LITERALS", "python")
        assert row_literals.texts(images, order) == images.take(order).to_pylist()
    finally:
        row_literals.compiled.cache_clear()


def test_a_writers_texts_over_many_chunks_are_the_taken_ones():
    """texts finds each number's chunk among dozens (empty, sliced, with nulls), in any order."""
    import random

    import pyarrow as pa

    rng, compiled = random.Random(7), scanned()
    for _ in range(100):
        chunks = []
        for _ in range(rng.randint(1, 70)):
            n, cut = rng.choice([0, 0, 1, 3, 17]), rng.randint(0, 4)
            values = [None if rng.random() < 0.1 else "é" * rng.randint(0, 3) + str(rng.random()) for _ in range(n + 4)]
            chunks.append(pa.array(values, pa.string()).slice(cut, n))
        images = pa.chunked_array(chunks, pa.string())
        numbers = pa.array([rng.randrange(len(images)) for _ in range(rng.randint(0, 200))] if len(images) else [],
                           pa.int64())
        assert compiled.texts(images.chunks, numbers) == images.take(numbers).to_pylist()
