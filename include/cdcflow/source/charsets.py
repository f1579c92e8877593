"""Which character set a collation id names, and how its text reads as the server reads it:
a Query event's statement in the character set of the session that wrote it, an ENUM or SET
column's members (source.enum_members) and a text column's values (source.text_columns).

A Query event carries its session's character_set_client as a collation id (the status
variable Q_CHARSET_CODE).  The ids are MariaDB 10.11's information_schema.COLLATIONS and
COLLATION_CHARACTER_SET_APPLICABILITY (its UCA 14 collations), plus MySQL 8.0's own above
MariaDB's range (tests/source/test_charsets.py compares the table with a live server's).
Python's codecs read the multi-byte character sets, the server's own tables the single-byte
ones (source.charset_maps: several of Python's codecs of the same names differ from them).
"""

from __future__ import annotations

import codecs
import re

from cdcflow.source.charset_maps import MULTI_BYTE_FIXES, SINGLE_BYTE

# character set -> its collation ids, as (first, last) ranges
COLLATION_IDS: dict[str, tuple[tuple[int, int], ...]] = {
    "armscii8": ((32, 32), (64, 64), (1056, 1056), (1088, 1088),),
    "ascii": ((11, 11), (65, 65), (1035, 1035), (1089, 1089),),
    "big5": ((1, 1), (84, 84), (1025, 1025), (1108, 1108),),
    "binary": ((63, 63),),
    "cp1250": ((26, 26), (34, 34), (44, 44), (66, 66), (99, 99), (1050, 1050), (1090, 1090),),
    "cp1251": ((14, 14), (23, 23), (50, 52), (1074, 1075),),
    "cp1256": ((57, 57), (67, 67), (1081, 1081), (1091, 1091),),
    "cp1257": ((29, 29), (58, 59), (1082, 1083),),
    "cp850": ((4, 4), (80, 80), (1028, 1028), (1104, 1104),),
    "cp852": ((40, 40), (81, 81), (1064, 1064), (1105, 1105),),
    "cp866": ((36, 36), (68, 68), (1060, 1060), (1092, 1092),),
    "cp932": ((95, 96), (1119, 1120),),
    "dec8": ((3, 3), (69, 69), (1027, 1027), (1093, 1093),),
    "eucjpms": ((97, 98), (1121, 1122),),
    "euckr": ((19, 19), (85, 85), (1043, 1043), (1109, 1109),),
    "gb2312": ((24, 24), (86, 86), (1048, 1048), (1110, 1110),),
    "gbk": ((28, 28), (87, 87), (1052, 1052), (1111, 1111),),
    "geostd8": ((92, 93), (1116, 1117),),
    "greek": ((25, 25), (70, 70), (1049, 1049), (1094, 1094),),
    "hebrew": ((16, 16), (71, 71), (1040, 1040), (1095, 1095),),
    "hp8": ((6, 6), (72, 72), (1030, 1030), (1096, 1096),),
    "keybcs2": ((37, 37), (73, 73), (1061, 1061), (1097, 1097),),
    "koi8r": ((7, 7), (74, 74), (1031, 1031), (1098, 1098),),
    "koi8u": ((22, 22), (75, 75), (1046, 1046), (1099, 1099),),
    "latin1": ((5, 5), (8, 8), (15, 15), (31, 31), (47, 49), (94, 94), (1032, 1032), (1071, 1071),),
    "latin2": ((2, 2), (9, 9), (21, 21), (27, 27), (77, 77), (1033, 1033), (1101, 1101),),
    "latin5": ((30, 30), (78, 78), (1054, 1054), (1102, 1102),),
    "latin7": ((20, 20), (41, 42), (79, 79), (1065, 1065), (1103, 1103),),
    "macce": ((38, 38), (43, 43), (1062, 1062), (1067, 1067),),
    "macroman": ((39, 39), (53, 53), (1063, 1063), (1077, 1077),),
    "sjis": ((13, 13), (88, 88), (1037, 1037), (1112, 1112),),
    "swe7": ((10, 10), (82, 82), (1034, 1034), (1106, 1106),),
    "tis620": ((18, 18), (89, 89), (1042, 1042), (1113, 1113),),
    "ucs2": ((35, 35), (90, 90), (128, 151), (159, 159), (640, 642), (1059, 1059), (1114, 1114), (1152, 1152), (1174, 1174), (2560, 2727), (2744, 2759),),
    "ujis": ((12, 12), (91, 91), (1036, 1036), (1115, 1115),),
    "utf16": ((54, 55), (101, 124), (672, 674), (1078, 1079), (1125, 1125), (1147, 1147), (2816, 2983), (3000, 3015),),
    "utf16le": ((56, 56), (62, 62), (1080, 1080), (1086, 1086),),
    "utf32": ((60, 61), (160, 183), (736, 738), (1084, 1085), (1184, 1184), (1206, 1206), (3072, 3239), (3256, 3271),),
    "utf8mb3": ((33, 33), (83, 83), (192, 215), (223, 223), (576, 578), (1057, 1057), (1107, 1107), (1216, 1216), (1238, 1238), (2048, 2215), (2232, 2247),),
    "utf8mb4": ((45, 46), (224, 247), (608, 610), (1069, 1070), (1248, 1248), (1270, 1270), (2304, 2471), (2488, 2503),),
}
MYSQL_ONLY_IDS: dict[str, tuple[tuple[int, int], ...]] = {  # MySQL 8.0's ids MariaDB does not use
    "utf8mb3": ((76, 76),),  # utf8mb3_tolower_ci
    "gb18030": ((248, 250),),
    "utf8mb4": ((255, 323),),  # the 0900 collations
}

# character set -> Python codec of its multi-byte text; None: a single-byte character set,
# read by the server's own table (source.charset_maps)
CODECS: dict[str, str | None] = {
    "armscii8": None, "ascii": None, "big5": "big5", "binary": "utf-8", "cp1250": None,
    "cp1251": None, "cp1256": None, "cp1257": None, "cp850": None, "cp852": None,
    "cp866": None, "cp932": "cp932", "dec8": None, "eucjpms": "euc_jp", "euckr": "cp949",
    "gb18030": "gb18030", "gb2312": "gb2312", "gbk": "gbk", "geostd8": None, "greek": None,
    "hebrew": None, "hp8": None, "keybcs2": None, "koi8r": None, "koi8u": None,
    "latin1": None, "latin2": None, "latin5": None, "latin7": None,
    "macce": None, "macroman": None, "sjis": "shift_jis", "swe7": None, "tis620": None,
    "ucs2": "utf-16-be", "ujis": "euc_jp", "utf16": "utf-16-be", "utf16le": "utf-16-le",
    "utf32": "utf-32-be", "utf8mb3": "utf-8", "utf8mb4": "utf-8",
}

_BY_ID = {i: cs for table in (MYSQL_ONLY_IDS, COLLATION_IDS) for cs, spans in table.items()
          for first, last in spans for i in range(first, last + 1)}


def charset_of(collation_id: int | None) -> str:
    """The character set of a collation id; utf8mb4 where the event names none (an old server)."""
    return _BY_ID.get(collation_id, "utf8mb4") if collation_id else "utf8mb4"


def decode(raw: bytes, collation_id: int | None) -> str:
    """A statement's bytes as text, read in the character set of `collation_id`.  Raises
    UnicodeDecodeError where the bytes are not of that character set."""
    return read(raw, charset_of(collation_id))


def read(raw: bytes, charset: str, errors: str = "strict") -> str:
    """`raw` as text of `charset`, as the server reads it; `errors` as bytes.decode's."""
    if charset in SINGLE_BYTE:
        return codecs.charmap_decode(raw, errors, SINGLE_BYTE[charset])[0]
    if charset in MULTI_BYTE_FIXES and _MAY_NEED_A_FIX[charset].search(raw):
        return _with_fixes(raw, charset, errors)
    return raw.decode(CODECS[charset], errors)


_CODEC_PREFIX = "mariadb_"
_registered = False


def codec(charset: str) -> str:
    """The name of a Python codec that reads text of `charset` as the server does (a column's
    values): Python's UTF-8 for the UTF-8 sets, this module's reading (`read`) registered as
    mariadb_<charset> for the others, whose Python codecs of the same names read some
    characters otherwise or not at all; binary's own name, which no codec has, for binary: its
    values are bytes."""
    if charset == "binary":
        return charset
    if CODECS[charset] == "utf-8":
        return "utf-8"
    if not _registered:
        _register()
    return _CODEC_PREFIX + charset


def _register() -> None:
    global _registered

    def search(name: str):
        charset = name[len(_CODEC_PREFIX):] if name.startswith(_CODEC_PREFIX) else None
        if charset not in CODECS or charset == "binary":
            return None

        def decode(raw, errors="strict"):
            return read(bytes(raw), charset, errors), len(raw)

        def encode(text, errors="strict"):
            raise UnicodeError(f"{name} only reads")

        return codecs.CodecInfo(encode, decode, name=name)

    codecs.register(search)
    _registered = True


# a character's bytes in each multi-byte character set (MariaDB's strings/ctype-*.c): how the
# server's lexer steps through a statement, and where MULTI_BYTE_FIXES' characters begin
_SJIS = re.compile(rb"[\x81-\x9f\xe0-\xfc][\x40-\x7e\x80-\xfc]|.", re.S)
_EUC_JP = re.compile(rb"\x8f[\xa1-\xfe][\xa1-\xfe]|[\x8e\xa1-\xfe][\xa1-\xfe]|.", re.S)
_UTF8 = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}|.", re.S)
CHARACTER = {
    "gbk": re.compile(rb"[\x81-\xfe][\x40-\x7e\x80-\xfe]|.", re.S),
    "gb18030": re.compile(rb"[\x81-\xfe][\x30-\x39][\x81-\xfe][\x30-\x39]|[\x81-\xfe][\x40-\x7e\x80-\xfe]|.", re.S),
    "big5": re.compile(rb"[\xa1-\xf9][\x40-\x7e\xa1-\xfe]|.", re.S),
    "euckr": re.compile(rb"[\x81-\xfe][\x41-\x5a\x61-\x7a\x81-\xfe]|.", re.S),
    "gb2312": re.compile(rb"[\xa1-\xf7][\xa1-\xfe]|.", re.S),
    "sjis": _SJIS, "cp932": _SJIS, "ujis": _EUC_JP, "eucjpms": _EUC_JP, "utf8mb3": _UTF8, "utf8mb4": _UTF8,
}


def character_length(raw: bytes, i: int, charset: str) -> int:
    """How many bytes the character at `raw[i]` takes in `charset`."""
    pattern = CHARACTER.get(charset)
    return pattern.match(raw, i).end() - i if pattern else 1


def user_defined(char: bytes) -> str | None:
    """EUC-JP's user-defined rows (F5-FE, and 8F F5-FE): MariaDB reads them as private-use
    characters, Python's codec not at all."""
    if len(char) == 2 and char[0] >= 0xF5:
        return chr(0xE000 + (char[0] - 0xF5) * 94 + char[1] - 0xA1)
    if len(char) == 3 and char[0] == 0x8F and char[1] >= 0xF5:
        return chr(0xE3AC + (char[1] - 0xF5) * 94 + char[2] - 0xA1)
    return None


def _fixes_begin(charset: str) -> re.Pattern:
    """A byte that begins a character MULTI_BYTE_FIXES (or, in EUC-JP, user_defined) reads:
    text without one reads as Python's codec reads it."""
    leads = {k[0] for k in MULTI_BYTE_FIXES[charset]}
    if charset in ("ujis", "eucjpms"):
        leads |= {*range(0xF5, 0xFF), 0x8F}
    return re.compile(b"[" + b"".join(re.escape(bytes([b])) for b in sorted(leads)) + b"]")


_MAY_NEED_A_FIX = {charset: _fixes_begin(charset) for charset in MULTI_BYTE_FIXES}


def _with_fixes(raw: bytes, charset: str, errors: str = "strict") -> str:
    """`raw` read by Python's codec but for the characters MariaDB reads otherwise."""
    fixes, codec, euc = MULTI_BYTE_FIXES[charset], CODECS[charset], charset in ("ujis", "eucjpms")
    out, plain = [], bytearray()
    for m in CHARACTER[charset].finditer(raw):
        char = m.group(0)
        fixed = fixes.get(char) or (user_defined(char) if euc else None)
        if fixed is None:
            plain += char
            continue
        out += [plain.decode(codec, errors), fixed]
        plain = bytearray()
    out.append(plain.decode(codec, errors))
    return "".join(out)
