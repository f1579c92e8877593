import calendar
import datetime as dt
import time

import pytest

from cdcflow.core import tso


def epoch_ms(*args) -> int:
    """Milliseconds since the epoch of a UTC date-time, computed without tso."""
    d = dt.datetime(*args)
    return calendar.timegm(d.timetuple()) * 1000 + d.microsecond // 1000


@pytest.mark.parametrize("physical, logical", [
    (0, 0), (0, 1), (1, 0), (1_795_000_000_123, 0), (1_795_000_000_123, 262_143), ((1 << 45) - 1, 7),
])
def test_compose_round_trip(physical, logical):
    ts = tso.compose(physical, logical)
    assert tso.physical_ms(ts) == physical
    assert tso.logical(ts) == logical
    assert ts == physical * 262_144 + logical


def test_compose_known_values():
    assert tso.compose(1) == 262_144
    assert tso.compose(1, 3) == 262_147
    # TiDB's 18 logical bits: a logical part never spills into the physical one
    assert tso.physical_ms(tso.compose(5, (1 << 18) + 2)) == 5


def test_for_binlog_event_follows_event_time():
    s = 1_795_000_000
    assert tso.for_binlog_event(0, s) == tso.compose(s * 1000)
    # a later second starts at its own physical time, logical 0
    prev = tso.compose(s * 1000, 5)
    assert tso.for_binlog_event(prev, s + 1) == tso.compose((s + 1) * 1000)


def test_for_binlog_event_same_second_twice_moves_by_one():
    s = 1_795_000_000
    first = tso.for_binlog_event(0, s)
    second = tso.for_binlog_event(first, s)
    third = tso.for_binlog_event(second, s)
    assert (second, third) == (first + 1, first + 2)
    assert tso.physical_ms(third) == s * 1000 and tso.logical(third) == 2


def test_for_binlog_event_time_going_backwards_still_increases():
    s = 1_795_000_000
    prev = tso.for_binlog_event(0, s)
    back = tso.for_binlog_event(prev, s - 3600)
    assert back == prev + 1


def test_for_binlog_event_is_monotonic_over_a_sequence():
    times = [100, 100, 99, 101, 101, 50, 102, 102, 102, 90, 200]
    ts, seen = 0, []
    for t in times:
        ts = tso.for_binlog_event(ts, t)
        seen.append(ts)
    assert all(b > a for a, b in zip(seen, seen[1:]))
    # deterministic: the same sequence gives the same ts list
    again, ts = [], 0
    for t in times:
        ts = tso.for_binlog_event(ts, t)
        again.append(ts)
    assert again == seen


def test_parse_digits_and_int():
    assert tso.parse("426030406279299073") == 426030406279299073
    assert tso.parse("  42  ") == 42
    assert tso.parse(0) == 0
    assert tso.parse(12345) == 12345


@pytest.mark.parametrize("text, expected_ms", [
    ("2026-11-22 10:00:00", epoch_ms(2026, 11, 22, 10)),
    ("2026-11-22T10:00:00", epoch_ms(2026, 11, 22, 10)),
    ("2026-11-22 10:00:00.123", epoch_ms(2026, 11, 22, 10, 0, 0, 123_000)),
    ("2026-11-22", epoch_ms(2026, 11, 22)),
    ("2026-11-22T10:00:00Z", epoch_ms(2026, 11, 22, 10)),
    ("2026-11-22T10:00:00+00:00", epoch_ms(2026, 11, 22, 10)),
    ("2026-11-22T10:00:00+08:00", epoch_ms(2026, 11, 22, 2)),
    ("2026-11-22 10:00:00.5-05:30", epoch_ms(2026, 11, 22, 15, 30, 0, 500_000)),
])
def test_parse_datetimes(text, expected_ms):
    ts = tso.parse(text)
    assert ts == tso.compose(expected_ms)
    assert tso.logical(ts) == 0


def test_parse_without_zone_is_utc_whatever_the_local_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert tso.parse("1970-01-01 00:00:01") == 1000 << 18
    finally:
        monkeypatch.undo()
        time.tzset()


def test_parse_milliseconds_are_exact():
    # float arithmetic must not lose a millisecond anywhere in a span of them
    base = dt.datetime(2026, 11, 22, 10, 0, 0)
    for ms in range(0, 20_000, 3):
        d = base + dt.timedelta(milliseconds=ms)
        text = d.isoformat(sep=" ", timespec="milliseconds")
        assert tso.physical_ms(tso.parse(text)) == epoch_ms(2026, 11, 22, 10) + ms, text


def test_parse_now():
    before = tso.compose(int(time.time() * 1000))
    got = tso.parse("now")
    after = tso.compose(int(time.time() * 1000))
    assert before <= got <= after
    assert tso.parse(" NOW ") >= got


@pytest.mark.parametrize("garbage", ["yesterday", "2026-13-01", "12:00", "-5", "0x10", ""])
def test_parse_garbage_says_what_is_accepted(garbage):
    with pytest.raises(ValueError) as e:
        tso.parse(garbage)
    msg = str(e.value)
    assert repr(garbage) in msg
    assert "neither a TSO" in msg and "2026-11-22 10:00:00" in msg


def test_to_text_format():
    ts = tso.compose(epoch_ms(2026, 11, 22, 4, 5, 6, 789_000), 17)
    assert tso.to_text(ts) == "2026-11-22 04:05:06.789"
    assert tso.to_text(tso.compose(epoch_ms(2021, 1, 2, 3, 4, 5))) == "2021-01-02 03:04:05.000"
    assert tso.to_text(0) is None and tso.to_text(None) is None


def test_to_text_parse_round_trip():
    for text in ["2026-11-22 04:05:06.789", "1999-12-31 23:59:59.999", "2038-01-19 03:14:08.000"]:
        assert tso.to_text(tso.parse(text)) == text


def test_to_datetime_is_utc():
    d = tso.to_datetime(tso.compose(epoch_ms(2026, 11, 22, 4)))
    assert d == dt.datetime(2026, 11, 22, 4, tzinfo=dt.timezone.utc)
