import pytest

from cdcflow.core.sql_mode import SQL_MODE_BITS, from_bits

# Bit values from MySQL's/MariaDB's sql_mode definitions (sql_class.h: MODE_REAL_AS_FLOAT = 1, ...)
KNOWN_BITS = {
    "REAL_AS_FLOAT": 1,
    "PIPES_AS_CONCAT": 2,
    "ANSI_QUOTES": 4,
    "IGNORE_SPACE": 8,
    "ONLY_FULL_GROUP_BY": 32,
    "NO_UNSIGNED_SUBTRACTION": 64,
    "NO_DIR_IN_CREATE": 128,
    "ANSI": 1 << 18,
    "NO_AUTO_VALUE_ON_ZERO": 1 << 19,
    "NO_BACKSLASH_ESCAPES": 1 << 20,
    "STRICT_TRANS_TABLES": 1 << 21,
    "STRICT_ALL_TABLES": 1 << 22,
    "NO_ZERO_IN_DATE": 1 << 23,
    "NO_ZERO_DATE": 1 << 24,
    "ERROR_FOR_DIVISION_BY_ZERO": 1 << 26,
    "TRADITIONAL": 1 << 27,
    "NO_AUTO_CREATE_USER": 1 << 28,
    "HIGH_NOT_PRECEDENCE": 1 << 29,
    "NO_ENGINE_SUBSTITUTION": 1 << 30,
    "PAD_CHAR_TO_FULL_LENGTH": 1 << 31,
}


@pytest.mark.parametrize("name, bit", sorted(KNOWN_BITS.items(), key=lambda kv: kv[1]))
def test_bit_positions(name, bit):
    assert SQL_MODE_BITS[bit.bit_length() - 1] == name


@pytest.mark.parametrize("bits, text", [
    (4, "ANSI_QUOTES"),
    (1 << 21, "STRICT_TRANS_TABLES"),
    (1 << 20, "NO_BACKSLASH_ESCAPES"),
    (4 | 1 << 21, "ANSI_QUOTES,STRICT_TRANS_TABLES"),
    # MariaDB 10.x default: STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION
    (1411383296, "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"),
    (1 | 2 | 8, "REAL_AS_FLOAT,PIPES_AS_CONCAT,IGNORE_SPACE"),
    (0, ""),
])
def test_from_bits(bits, text):
    assert from_bits(bits) == text


def test_none_is_none():
    assert from_bits(None) is None


def test_combination_modes_are_dropped_but_their_parts_kept():
    # SET sql_mode='ANSI' stores ANSI plus REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY
    ansi = (1 << 18) | 1 | 2 | 4 | 8 | 32
    assert from_bits(ansi) == "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY"
    traditional = (1 << 27) | (1 << 21) | (1 << 22) | (1 << 23) | (1 << 24) | (1 << 26) | (1 << 28) | (1 << 30)
    assert from_bits(traditional) == ("STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                                      "ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION")
    for combo in ("POSTGRESQL", "ORACLE", "MSSQL", "DB2", "MAXDB", "MYSQL323", "MYSQL40", "ANSI", "TRADITIONAL"):
        assert from_bits(1 << SQL_MODE_BITS.index(combo)) == "", combo


def test_every_named_bit_is_reported_once_in_bit_order():
    all_bits = (1 << len(SQL_MODE_BITS)) - 1
    names = from_bits(all_bits).split(",")
    assert len(names) == len(set(names)) == len(SQL_MODE_BITS) - 9
    assert names == [n for n in SQL_MODE_BITS if n in names]


def test_unknown_high_bits_are_ignored():
    assert from_bits((1 << 50) | 4) == "ANSI_QUOTES"
