import datetime as dt
import decimal
import json
import math

import pytest

from cdcflow.core.row_codec import decode_image, encode_image, format_time, quote_ident, sql_literal

# MySQL's backslash escapes inside a quoted string (string-literals.html, table 9.1)
_ESCAPES = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a",
            "\\": "\\", "%": "\\%", "_": "\\_"}


def mysql_unquote(lit: str) -> str:
    """What a MySQL server (without NO_BACKSLASH_ESCAPES) reads from a quoted literal."""
    assert lit[0] == "'" and lit[-1] == "'", lit
    body, out, i = lit[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        elif c == "'":
            assert body[i + 1] == "'", f"unescaped quote in {lit!r}"
            out.append("'")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def through(value):
    """encode_image -> decode_image of a one-column row, then the SQL literal."""
    text = encode_image({"c": value})
    decoded = decode_image(text)["c"]
    return text, decoded, sql_literal(decoded)


@pytest.mark.parametrize("v", [0, 1, -1, 127, 2**31 - 1, 2**63 - 1, 18446744073709551615, -9223372036854775808])
def test_ints(v):
    _, d, lit = through(v)
    assert d == v and type(d) is int
    assert lit == str(v) and int(lit) == v


def test_bools_are_written_as_integers():
    assert through(True)[2] == "1" and through(False)[2] == "0"


@pytest.mark.parametrize("v", [0.0, 1.5, -2.25, 1e308, -1e308, 5e-324, 2.2250738585072014e-308, 0.1, 1 / 3,
                               3.4028234663852886e38])
def test_finite_floats_exact(v):
    _, d, lit = through(v)
    assert d == v and type(d) is float
    assert float(lit) == v  # shortest repr parses back to the same double


def test_negative_zero_keeps_its_sign():
    _, d, lit = through(-0.0)
    assert d == 0.0 and math.copysign(1.0, d) == -1.0
    assert lit == "-0.0"


@pytest.mark.parametrize("v", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_inf_survive_the_image(v):
    text = encode_image({"c": v})
    json.loads(text)  # still strict JSON text
    d = decode_image(text)["c"]
    assert (math.isnan(d) if math.isnan(v) else d == v)


@pytest.mark.parametrize("v", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_inf_have_no_sql_literal(v):
    # MySQL has no NaN/Infinity literal: a bare `nan` would be read as a column name
    with pytest.raises(ValueError, match=repr(v)):
        sql_literal(decode_image(encode_image({"c": v}))["c"])


@pytest.mark.parametrize("text, literal", [
    ("12345678901234567890.123456789012345678901234567890", "12345678901234567890.123456789012345678901234567890"),
    ("-0.50", "-0.50"),
    ("0", "0"),
    ("0.0000000000", "0.0000000000"),
    ("0.000000012345678901234567890123", "0.000000012345678901234567890123"),
    ("99999999999999999999999999999999999.999999999999999999999999999999",
     "99999999999999999999999999999999999.999999999999999999999999999999"),
])
def test_decimals_exact_and_never_in_exponent_form(text, literal):
    v = decimal.Decimal(text)
    _, d, lit = through(v)
    assert isinstance(d, decimal.Decimal) and d == v and str(d) == str(v)  # scale kept too
    # an exponent ('1.2E-8') would make MySQL read a DOUBLE and round a DECIMAL(65,30)
    assert lit == literal
    assert "E" not in lit.upper()


def test_bytes_every_byte_value():
    v = bytes(range(256))
    text, d, lit = through(v)
    assert d == v and isinstance(d, bytes)
    assert lit == "X'" + v.hex() + "'"
    assert bytes.fromhex(lit[2:-1]) == v
    assert through(b"")[2] == "''"
    assert through(bytearray(b"\x00\xff"))[1] == b"\x00\xff"


@pytest.mark.parametrize("v", [
    "", "plain", "it's", 'say "hi"', "back\\slash", "ends with \\", "line\nbreak\r\ttab", "nul\0inside",
    "ctrl-z \x1a", "emoji 😀 and 中文", "'; DROP TABLE t; --", "%_ wildcards", "\\'", "''",
])
def test_strings(v):
    text, d, lit = through(v)
    assert d == v
    assert mysql_unquote(lit) == v


def test_string_literal_exact_escapes():
    assert sql_literal("a'b\\c\nd\0e\"f") == "'a\\'b\\\\c\\nd\\0e\\\"f'"
    assert sql_literal("😀") == "'😀'"


def test_datetimes():
    v = dt.datetime(2026, 11, 22, 4, 5, 6, 789)
    text, d, lit = through(v)
    assert d == v
    assert lit == "'2026-11-22 04:05:06.000789'"
    assert through(dt.datetime(2026, 1, 2))[2] == "'2026-01-02 00:00:00.000000'"
    assert through(dt.datetime(9999, 12, 31, 23, 59, 59, 999999))[1] == dt.datetime(9999, 12, 31, 23, 59, 59, 999999)


def test_datetime_with_a_year_below_1000():
    # MySQL stores years 0001-0999 in DATETIME; their text must keep four digits
    v = dt.datetime(999, 1, 2, 3, 4, 5, 6)
    text, d, lit = through(v)
    assert d == v
    assert lit == "'0999-01-02 03:04:05.000006'"


def test_dates():
    assert through(dt.date(2026, 11, 22))[1:] == (dt.date(2026, 11, 22), "'2026-11-22'")
    assert through(dt.date(1, 1, 1))[2] == "'0001-01-01'"
    d = through(dt.date(2026, 11, 22))[1]
    assert type(d) is dt.date


@pytest.mark.parametrize("v, literal", [
    (-dt.timedelta(hours=838, minutes=59, seconds=59), "'-838:59:59.000000'"),
    (dt.timedelta(hours=838, minutes=59, seconds=59), "'838:59:59.000000'"),
    (dt.timedelta(days=1, hours=1, minutes=1, seconds=1, microseconds=5), "'25:01:01.000005'"),
    (dt.timedelta(microseconds=-1), "'-00:00:00.000001'"),
    (dt.timedelta(hours=-1, minutes=30), "'-00:30:00.000000'"),
    (dt.timedelta(0), "'00:00:00.000000'"),
])
def test_times_beyond_a_day_and_negative(v, literal):
    assert through(v)[2] == literal
    assert format_time(v) == literal[1:-1]


def test_sets_are_sorted_member_lists():
    text, d, lit = through({"b", "a", "c"})
    assert lit == "'a,b,c'"
    assert through(frozenset())[2] == "''"
    # same set, different insertion order: same text
    assert encode_image({"c": {"x", "y"}}) == encode_image({"c": {"y", "x"}})


def test_json_documents():
    doc = {"z": 1, "a": [1, "two", None, True, 1.5], "q": "it's \"quoted\"\n", "u": "😀"}
    text, d, lit = through(doc)
    back = json.loads(mysql_unquote(lit))
    assert back == doc
    assert list(back) == ["z", "a", "q", "u"]  # key order as the document had it
    assert through([1, {"k": "v"}])[2] == "'[1,{\"k\":\"v\"}]'".replace('"', '\\"')


def test_null():
    text, d, lit = through(None)
    assert d is None and lit == "NULL"
    assert encode_image(None) is None and decode_image(None) is None


def test_a_whole_row_keeps_column_order_and_values():
    row = {"id": 18446744073709551615, "name": "o'neil", "price": decimal.Decimal("1.50"),
           "blob": b"\x00\x01", "at": dt.datetime(2026, 11, 22, 4, 0, 0, 1), "gone": None}
    back = decode_image(encode_image(row))
    assert list(back) == list(row)
    assert back == row


def test_canonical_same_value_same_text():
    def row():
        return {"b": 2, "a": decimal.Decimal("1.10"), "t": dt.timedelta(hours=-1), "j": {"y": 1, "x": 2},
                "s": {"q", "p"}, "bin": b"\xff", "f": 0.1}
    first = encode_image(row())
    assert encode_image(row()) == first
    assert first.index('"b"') < first.index('"a"')  # column order, not sorted
    assert encode_image(decode_image(first) | {"t": dt.timedelta(hours=-1), "j": {"y": 1, "x": 2},
                                              "s": {"p", "q"}}) == first
    # a different JSON key order is a different document text, so a different image
    assert encode_image({"j": {"x": 2, "y": 1}}) != encode_image({"j": {"y": 1, "x": 2}})


def test_unknown_types_and_tags_are_refused():
    with pytest.raises(TypeError, match="object"):
        encode_image({"c": object()})
    with pytest.raises(ValueError, match="'zz'"):
        decode_image('{"c": {"zz": 1}}')
    with pytest.raises(TypeError):
        sql_literal(object())


def test_quote_ident():
    assert quote_ident("t") == "`t`"
    assert quote_ident("we`ird") == "`we``ird`"
