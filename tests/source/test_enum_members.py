"""ENUM and SET members are read in their column's character set (source.enum_members), and an
ENUM whose members are not text is written by member number (column_types.read_enum)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcflow.source import column_types, enum_members

LATIN1, GBK, UTF8MB4, UCS2, BINARY = 8, 28, 45, 35, 63


@pytest.mark.parametrize("members, collation, text", [
    ([b"\xe9", b"\xfc", b"a"], LATIN1, ["é", "ü", "a"]),
    ([b"\xc3\xa9", b"\xe9"], LATIN1, ["Ã©", "é"]),  # valid UTF-8 bytes are still latin1's
    ([b"\x80"], LATIN1, ["€"]),  # MariaDB's latin1 is cp1252's letters
    ([b"\xd6\xd0", b"\xce\xc4", b"a"], GBK, ["中", "文", "a"]),
    ([b"\xc3\xa9"], UTF8MB4, ["é"]),
    ([b"\x00\xe9"], UCS2, ["é"]),
    ([b"ab"], BINARY, ["ab"]),
])
def test_members_are_read_in_their_charset(members, collation, text):
    assert enum_members.decoded(members, collation) == text


def test_members_that_are_no_text_of_their_charset_are_none():
    assert enum_members.decoded([b"a", b"\xff\xfe"], BINARY) is None


class _Packet:
    def __init__(self, value: int):
        self.value = value

    def read_uint_by_size(self, size: int) -> int:
        return self.value


@pytest.mark.parametrize("members, index, value", [
    (["", "é", "ü"], 2, "ü"),
    (["", "é"], 0, ""),  # the error value a lax session stored
    (None, 2, 2),  # no members: the member number, which the downstream reads as the same member
    (["", "é"], 5, 5),  # past the members the event names: the number, not an IndexError
])
def test_enum_values(members, index, value):
    column = SimpleNamespace(size=1, enum_values=members)
    assert column_types.read_enum(_Packet(index), column) == value
