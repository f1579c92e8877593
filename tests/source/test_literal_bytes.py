"""Introducer literals whose bytes the statement's UTF-8 text cannot carry become hexadecimal,
scanned as the server's lexer scans them."""

from __future__ import annotations

import pytest

from cdcflow.source.literal_bytes import rewrite


@pytest.mark.parametrize("raw, charset, want", [
    # a binary literal under GBK: escapes read, the quote escaped by a backslash kept inside
    (b"DEFAULT _binary'\xff\\'\x00' x", "gbk", b"DEFAULT _binary X'FF2700' x"),
    (b"DEFAULT _binary '\xc3\xa9'", "gbk", b"DEFAULT _binary X'C3A9'"),
    (b"DEFAULT _latin1'\xe9'", "gbk", b"DEFAULT _latin1 X'E9'"),
    (b"DEFAULT _BINARY\n'\\0\\n\\Z\\%\xaa'", "sjis", b"DEFAULT _BINARY X'000A1A5C25AA'"),
    # a GBK character whose trail byte is 0x5C escapes nothing
    (b"DEFAULT _binary'\x95\\\xff'", "gbk", b"DEFAULT _binary X'955CFF'"),
    # doubled quotes
    (b"DEFAULT _binary'a''\xff'", "latin1", b"DEFAULT _binary X'6127FF'"),
    # left alone: ASCII bytes, the session's own character set, valid UTF-8 in a UTF-8 session,
    # a literal without introducer, a name ending in a character set's, comments and identifiers
    (b"DEFAULT _binary'abc'", "gbk", None),
    (b"DEFAULT _gbk'\xce\xd2'", "gbk", None),
    (b"DEFAULT _binary'\xc3\xa9'", "utf8mb4", None),
    (b"DEFAULT _utf8'\xc3\xa9'", "utf8mb4", None),
    (b"COMMENT '\xce\xd2_binary''\xff'", "gbk", None),
    (b"DEFAULT col_latin1 '\xe9'", "gbk", None),
    (b"`_binary` INT /* _binary'\xff' */ -- _binary'\xff'\n", "gbk", None),
    (b"DEFAULT _nosuchset'\xff'", "gbk", None),
    (b"BEGIN", "gbk", None),
])
def test_rewrite(raw, charset, want):
    assert rewrite(raw, charset) == (raw if want is None else want)


def test_a_utf8_session_s_binary_literal_that_is_no_utf8_becomes_hexadecimal():
    assert rewrite(b"DEFAULT _binary'\xff\x00'", "utf8mb4") == b"DEFAULT _binary X'FF00'"


def test_without_backslash_escapes_a_backslash_is_a_byte_and_ansi_quotes_make_identifiers():
    assert rewrite(b"DEFAULT _binary'\xff\\' x", "gbk", backslash_escapes=False) == b"DEFAULT _binary X'FF5C' x"
    raw = b'CREATE TABLE "_binary" (a VARBINARY(2) DEFAULT _binary\'\xff\')'
    assert rewrite(raw, "gbk", ansi_quotes=True) == b'CREATE TABLE "_binary" (a VARBINARY(2) DEFAULT _binary X\'FF\')'
