"""What a MySQL 8 upstream sends that MariaDB does not, read from binlog files (no MySQL server
runs here): source.binlog_file reads a file as a dump, through both readers.

MariaDB's own test data (the mariadb-test package) holds two binlogs of other servers:
std_data/mdev35643_mysql_80_binlog.000001, written by MySQL 8.0.40 (binlog_row_metadata=MINIMAL:
its table maps name no columns) with, after four plain transactions, a zstd-compressed one
(binlog_transaction_compression: a TRANSACTION_PAYLOAD_EVENT of 100 rows), a row, a statement
and a PARTIAL_UPDATE_ROWS_EVENT (binlog_row_value_options=PARTIAL_JSON); and
std_data/mdev29078-mysql-bin.000001, written by MariaDB 10.3 (statement-format inserts, a STOP
event).  Each is read by both readers, every Event field compared, and its rows compared with
those mariadb-binlog -vv prints (of the compressed transaction: of a copy of the file whose
payload this test decompresses itself).  The files the tests craft splice events into them:
an unknown type, an incident, MariaDB's compressed rows, events a reader passes over.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import zstandard

from cdcflow.core.errors import UPSTREAM_BINLOG, CdcflowError
from cdcflow.core.row_codec import decode_image
from cdcflow.source import binlog_events, event_types
from cdcflow.source.binlog import check_binlog_variables, read_event_classes
from cdcflow.source.binlog_file import FileBinlogReader
from cdcflow.source.position import Position

STD_DATA = [Path("/usr/share/mysql/mysql-test/std_data"), Path("/usr/share/mariadb/mariadb-test/std_data")]
MYSQL80 = "mdev35643_mysql_80_binlog.000001"
MARIADB103 = "mdev29078-mysql-bin.000001"
# the MySQL 8.0 file's tables, as its CREATE TABLE statements name their columns (its table maps
# name none: binlog_row_metadata=MINIMAL)
MYSQL80_COLUMNS = {("test", "t1"): ["a", "b", "c"], ("test", "t2"): ["a", "b"]}
PAYLOAD_AT, PAYLOAD_END = 1468, 2297  # the MySQL 8.0 file's TRANSACTION_PAYLOAD_EVENT
PARTIAL_AT, PARTIAL_END = 3403, 4359  # and its PARTIAL_UPDATE_ROWS_EVENT (of test.t2)


def std_data(name: str) -> Path:
    for folder in STD_DATA:
        if (folder / name).exists():
            return folder / name
    # make setup installs it: a machine without it was not set up, which is a failure, not a pass
    pytest.fail(f"{name} is MariaDB's test data, which the mariadb-test package installs (apt-get install "
                "mariadb-test; make setup's system-packages installs it): it is not installed here")


# ---- binlog files: read, crafted ------------------------------------------------------------

def file_events(data: bytes) -> list[bytes]:
    out, at = [], 4
    while at < len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little")
        out.append(data[at:at + size])
        at += size
    return out


def rebuilt(events: list[bytes]) -> bytes:
    """A binlog file of `events` (each with its 4 checksum bytes), each given its size, its
    end_log_pos and its CRC32 as the server writes them."""
    out = bytearray(b"\xfebin")
    for ev in events:
        end = len(out) + len(ev)
        head = ev[:9] + len(ev).to_bytes(4, "little") + end.to_bytes(4, "little") + ev[17:19]
        body = head + ev[19:-4]
        out += body + (zlib.crc32(body) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out)


def event(etype: int, body: bytes, timestamp: int = 1700000000, flags: int = 0) -> bytes:
    """An event of `etype` (sizes and positions set by rebuilt)."""
    return struct.pack("<IBIIIH", timestamp, etype, 1, 0, 0, flags) + body + b"\0\0\0\0"


def lenenc(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    return b"\xfc" + n.to_bytes(2, "little") if n < 65536 else b"\xfd" + n.to_bytes(3, "little")


def payload_fields(body: bytes) -> tuple[dict[int, int], bytes]:
    """A TRANSACTION_PAYLOAD's header fields and its payload (MySQL's layout, read here on its own)."""
    def read(at):
        first = body[at]
        if first < 251:
            return first, at + 1
        width = {252: 2, 253: 3, 254: 8}[first]
        return int.from_bytes(body[at + 1:at + 1 + width], "little"), at + 1 + width
    fields, at = {}, 0
    while True:
        kind, at = read(at)
        if kind == 0:
            return fields, body[at:]
        length, at = read(at)
        fields[kind] = read(at)[0]
        at += length


def inner_events(payload_event: bytes) -> list[bytes]:
    """The events a TRANSACTION_PAYLOAD holds, each with 4 checksum bytes added."""
    fields, data = payload_fields(payload_event[19:-4])
    raw = zstandard.ZstdDecompressor().decompressobj().decompress(data) if fields[2] == 0 else data
    out, at = [], 0
    while at < len(raw):
        size = int.from_bytes(raw[at + 9:at + 13], "little")
        out.append(raw[at:at + size] + b"\0\0\0\0")
        at += size
    return out


def payload_event(inner: list[bytes], compression: int = 0, timestamp: int = 1734117024) -> bytes:
    """A TRANSACTION_PAYLOAD of events (each with checksum bytes, dropped: the payload's have none)."""
    raw = b"".join(ev[:9] + (len(ev) - 4).to_bytes(4, "little") + b"\0\0\0\0" + ev[17:-4] for ev in inner)
    data = zstandard.ZstdCompressor().compress(raw) if compression == 0 else raw

    def field(kind, value):
        v = lenenc(value)
        return lenenc(kind) + lenenc(len(v)) + v
    body = field(2, compression) + field(3, len(raw)) + field(1, len(data)) + b"\0" + data
    return event(40, body, timestamp)


def spliced(path: Path, tmp_path: Path, at: int, new: list[bytes], name: str | None = None) -> Path:
    """A copy of the binlog file with `new` events put before its event starting at `at`."""
    events = file_events(path.read_bytes())
    starts = [4]
    for ev in events:
        starts.append(starts[-1] + len(ev))
    i = starts.index(at)
    out = tmp_path / (name or path.name)
    out.write_bytes(rebuilt(events[:i] + new + events[i:]))
    return out


# ---- reading a file both ways -----------------------------------------------------------------

def read_file(path: Path, reader: str, monkeypatch, head: Position | None = None,
              column_names=None) -> tuple[list, tuple, CdcflowError | None, list]:
    """The Events a FileBinlogReader reads with `reader` ("python" or "compiled"), its state
    after, the error it stopped at, and the tables of the rows events the compiled reader handed
    to mysql-replication."""
    slow_rows = []
    with monkeypatch.context() as m:
        m.setenv(binlog_events.READER_ENV, reader)
        if reader == "compiled":
            assert binlog_events.compiled_module() is not None, "the compiled reader is not built: run make setup"
            # BinlogReader decodes with row_images only what mysql-replication read
            images = binlog_events.row_images
            m.setattr(binlog_events, "row_images",
                      lambda ev, op, rows: slow_rows.append(ev.table) or images(ev, op, rows))
        events, error = [], None
        r = FileBinlogReader(path, head=head, column_names=column_names)
        try:
            r.read(events.append)
        except CdcflowError as e:
            error = e
    state = (r.last_pos, r.last_ts, r.transactions, sorted(r.aborted_ts), str(r.read_gtids))
    return events, state, error, slow_rows


def read_both(path: Path, monkeypatch, **kwargs) -> tuple[list, tuple, CdcflowError | None, list]:
    """The file read both ways, every Event field, the state and the error compared."""
    python = read_file(path, "python", monkeypatch, **kwargs)
    compiled = read_file(path, "compiled", monkeypatch, **kwargs)
    assert compiled[1] == python[1]
    assert len(compiled[0]) == len(python[0])
    for c, p in zip(compiled[0], python[0]):
        assert c == p
    assert str(compiled[2]) == str(python[2])
    return compiled


def rows_of(events) -> list[tuple[str, str, str, list[str]]]:
    """(op, schema, table, values in column order as mariadb-binlog prints them) of each row."""
    out = []
    for e in events:
        if e.op == "insert":
            out.append(("INSERT", e.schema, e.table, [str(v) for v in decode_image(e.after).values()]))
    return out


def mariadb_binlog(path: Path) -> str:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        pytest.fail("mariadb-binlog is not installed (make setup's system-packages installs mariadb-client)")
    return subprocess.run([tool, "-vv", str(path)], capture_output=True, text=True, check=False).stdout


def printed_rows(text: str) -> list[tuple[str, str, str, list[str]]]:
    """The rows mariadb-binlog -vv prints: ### INSERT INTO `s`.`t` / ### SET / ###   @1=v /* ... */."""
    out = []
    for line in text.splitlines():
        m = re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\.`([^`]*)`$", line)
        if m:
            out.append((m.group(1).split()[0], m.group(2), m.group(3), []))
            continue
        m = re.match(r"###   @(\d+)=(.*) /\* ", line)
        if m:
            value = m.group(2)
            if value.startswith("'") and value.endswith("'"):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            assert int(m.group(1)) == len(out[-1][3]) + 1
            out[-1][3].append(value)
    return out


def printed_statements(text: str) -> list[str]:
    """The statements of the Query events mariadb-binlog prints (BEGIN/COMMIT left out)."""
    out = []
    for chunk in text.split("\n# at ")[1:]:
        if "\tQuery\t" not in chunk.split("\n", 2)[1]:
            continue
        lines = chunk.splitlines()
        ends = [i for i, line in enumerate(lines) if line == "/*!*/;"]
        statement = lines[ends[-1] - 1]
        if statement not in ("BEGIN", "COMMIT", "ROLLBACK"):
            out.append(statement)
    return out


# ---- the real files ----------------------------------------------------------------------------

def test_mysql80_file_reads_as_mariadb_binlog_prints_it_compressed_transaction_included(monkeypatch, tmp_path):
    """Both readers read the MySQL 8.0 file's rows, the compressed transaction's 100 among them,
    as mariadb-binlog prints them; they stop at the PARTIAL_UPDATE_ROWS_EVENT by name."""
    path = std_data(MYSQL80)
    events, state, error, slow = read_both(path, monkeypatch, column_names=MYSQL80_COLUMNS)

    # mariadb-binlog reads the file up to the payload (MariaDB has no reader of it): a copy with
    # the payload's events in its place, decompressed here, is printed whole up to the partial update
    original = file_events(path.read_bytes())
    copy, at = [], 4
    for ev in original:
        if at >= 3190:  # the transaction of the partial update (its ANONYMOUS_GTID first): MariaDB refuses it
            break
        copy += inner_events(ev) if ev[4] == 40 else [ev]
        at += len(ev)
    # 34 events before, the payload's 202 in its place: BEGIN, a table map and a row each of 100 rows, XID
    assert [ev[4] for ev in original].count(40) == 1 and len(copy) == 34 - 1 + 202
    (tmp_path / "uncompressed").write_bytes(rebuilt(copy))
    printed = printed_rows(mariadb_binlog(tmp_path / "uncompressed"))
    assert printed[:4] == printed_rows(mariadb_binlog(path))[:4]  # the file itself, up to the payload
    assert len(printed) == 4 + 100 + 1
    assert rows_of(events) == printed
    # the rows the recipe in MariaDB's rpl_from_mysql80.test inserted
    assert [r[3] for r in printed[4:104]] == [[str(1000 + i), str(i), f"--{i}--" + "/" * 100 + "--"]
                                             for i in range(100)]
    assert printed[104][3] == ["5", "0", "after compressed"]
    assert slow == []  # the compressed rows went through the compiled reader's own decoding too

    # one transaction each: the payload's rows share one commit ts, and its end is a checkpoint
    compressed = [e for e in events if e.op == "insert" and int(decode_image(e.after)["a"]) >= 1000]
    assert len({e.commit_ts for e in compressed}) == 1
    assert {(e.start_file, e.start_pos) for e in compressed} == {(path.name, 1389)}
    after = next(e for e in events if e.op == "insert" and decode_image(e.after)["a"] == 5)
    assert after.start_pos == PAYLOAD_END  # the boundary after the compressed transaction
    ddl = [e.ddl_query for e in events if e.op == "ddl"]
    assert ddl[0].startswith("CREATE TABLE t1 (a INT PRIMARY KEY, b INT, c VARCHAR(1024))")  # the names given
    assert ddl[1].startswith("CREATE TABLE t2 (a INT PRIMARY KEY, b JSON)")
    assert ddl[2].startswith("INSERT INTO t2 VALUES (1, CONCAT(")  # binlog_format=statement: a Query event

    assert error is not None and error.code == UPSTREAM_BINLOG
    assert (f"PARTIAL_UPDATE_ROWS_EVENT (binlog event type 39) of test.t2 at {path.name}:{PARTIAL_AT} "
            f"(end_log_pos {PARTIAL_END})") in error.message
    assert "binlog_row_value_options=''" in error.hint
    assert state[0] == Position(path.name, 3159)  # the last transaction read whole: the statement's


def test_mysql80_file_without_column_names_stops_at_its_first_rows_event(monkeypatch):
    """A table map without names (binlog_row_metadata=MINIMAL) stops pull (mysql-replication named
    the values UNKNOWN_COL0, ...)."""
    path = std_data(MYSQL80)
    events, _state, error, _slow = read_both(path, monkeypatch)
    assert [e.op for e in events] == ["ddl"]
    assert error is not None and f"a rows event of test.t1 at {path.name}:627 has no column names" in error.message
    assert "binlog_row_metadata=MINIMAL" in error.message and "binlog_row_metadata='FULL'" in error.hint


def test_mariadb103_file_reads_as_mariadb_binlog_prints_it(monkeypatch):
    """MariaDB 10.3's file (its format description's post-headers, GTID list, checkpoint and STOP
    events, statement-format inserts) reads alike both ways: no rows, as mariadb-binlog prints none,
    and its statements, each its own transaction."""
    path = std_data(MARIADB103)
    events, state, error, _slow = read_both(path, monkeypatch)
    text = mariadb_binlog(path)
    assert error is None
    assert rows_of(events) == printed_rows(text) == []
    assert [e.ddl_query for e in events] == printed_statements(text) == [
        "create table t1 (f1 timestamp, f2 timestamp)", "insert t1 values (NULL, NULL)", "insert t1 () values ()"]
    assert [e.gtid for e in events] == ["0-1-1", "0-1-2", "0-1-3"]
    assert state[2] == 3


# ---- compressed transactions, crafted ------------------------------------------------------------

def _payload(path: Path) -> bytes:
    return next(ev for ev in file_events(path.read_bytes()) if ev[4] == 40)


def test_an_uncompressed_payload_and_a_recompressed_one_read_as_the_original(monkeypatch, tmp_path):
    """compression type 255 (none) and zstd written here read the same rows as MySQL's payload."""
    path = std_data(MYSQL80)
    want = rows_of(read_both(path, monkeypatch, column_names=MYSQL80_COLUMNS)[0])
    for compression in (0, 255):
        events = file_events(path.read_bytes())
        i = next(k for k, ev in enumerate(events) if ev[4] == 40)
        events[i] = payload_event(inner_events(events[i]), compression)
        (tmp_path / path.name).write_bytes(rebuilt(events))
        got = read_both(tmp_path / path.name, monkeypatch, column_names=MYSQL80_COLUMNS)
        assert rows_of(got[0]) == want
        assert "PARTIAL_UPDATE_ROWS_EVENT" in str(got[2])


def test_a_window_ends_before_a_compressed_transaction_or_after_it(monkeypatch):
    """A head at the payload's start leaves its transaction to the next window; at its end reads it."""
    path = std_data(MYSQL80)
    before, state, error, _ = read_both(path, monkeypatch, head=Position(path.name, 1389),
                                        column_names=MYSQL80_COLUMNS)
    assert error is None and len(rows_of(before)) == 4 and state[0] == Position(path.name, 1389)
    through, state, error, _ = read_both(path, monkeypatch, head=Position(path.name, PAYLOAD_END),
                                         column_names=MYSQL80_COLUMNS)
    assert error is None and len(rows_of(through)) == 104 and state[0] == Position(path.name, PAYLOAD_END)


def test_an_unreadable_payload_stops_pull_by_name(monkeypatch, tmp_path):
    path = std_data(MYSQL80)
    bad = bytearray(_payload(path))
    bad[-40:-4] = b"\x00" * 36  # the zstd frame's end overwritten
    (tmp_path / path.name).write_bytes(rebuilt([bad if ev[4] == 40 else ev for ev in file_events(path.read_bytes())]))
    _events, _state, error, _ = read_both(tmp_path / path.name, monkeypatch, column_names=MYSQL80_COLUMNS)
    assert (f"cannot read the compressed transaction (TRANSACTION_PAYLOAD_EVENT) at {path.name}:{PAYLOAD_AT}"
            in str(error))

    other = rebuilt([payload_event([], 7) if ev[4] == 40 else ev for ev in file_events(path.read_bytes())])
    (tmp_path / path.name).write_bytes(other)
    _events, _state, error, _ = read_both(tmp_path / path.name, monkeypatch, column_names=MYSQL80_COLUMNS)
    assert "compression type 7" in error.message and "binlog_transaction_compression=OFF" in error.hint


def test_without_zstandard_a_compressed_transaction_stops_pull_and_create(monkeypatch):
    path = std_data(MYSQL80)
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard raises ImportError
    _events, _state, error, _ = read_both(path, monkeypatch, column_names=MYSQL80_COLUMNS)
    assert "zstd-compressed and the zstandard package is not installed" in error.message
    assert "binlog_transaction_compression=OFF" in error.hint
    with pytest.raises(CdcflowError, match="binlog_transaction_compression=ON") as e:
        check_binlog_variables({**FULL, "binlog_transaction_compression": "ON"}, "up")
    assert "SET GLOBAL binlog_transaction_compression=OFF" in e.value.hint


def test_an_event_pull_refuses_inside_a_payload_is_named_at_the_payload(monkeypatch, tmp_path):
    path = std_data(MYSQL80)
    events = file_events(path.read_bytes())
    i = next(k for k, ev in enumerate(events) if ev[4] == 40)
    inner = inner_events(events[i])
    events[i] = payload_event(inner[:3] + [event(200, b"\x01\x02\x03")] + inner[3:])
    (tmp_path / path.name).write_bytes(rebuilt(events))
    got, _state, error, _ = read_both(tmp_path / path.name, monkeypatch, column_names=MYSQL80_COLUMNS)
    assert len(rows_of(got)) == 4 + 1  # the row before it in the transaction went out (not committed: aborted)
    assert (f"an event of type 200, which cdcflow does not know, inside the compressed transaction "
            f"(TRANSACTION_PAYLOAD_EVENT) at {path.name}:{PAYLOAD_AT}") in error.message


# ---- event types: none passed over in silence ------------------------------------------------------

def test_every_event_type_is_read_passed_over_or_refused_and_mysql_replication_drops_none_unlisted():
    """The classes BinlogReader does not ask for are of types PASSED_OVER or READ: mysql-replication
    drops those without a record, so no other type may be among them."""
    from pymysqlreplication.packet import BinLogPacketWrapper

    read, passed, refused = event_types.READ, set(event_types.PASSED_OVER), set(event_types.REFUSED)
    assert not (read & passed) and not (read & refused) and not (passed & refused)
    assert (read | passed | refused) <= set(event_types.NAMES)
    asked = set(read_event_classes())
    for etype, cls in BinLogPacketWrapper._BinLogPacketWrapper__event_map.items():
        if cls not in asked:
            assert etype in read or etype in passed, (etype, cls.__name__)
    # the types the compiled reader decodes or passes over itself
    assert set(binlog_events._ROW_OPS_BY_TYPE) <= read and {2, 16, 19, 162} <= read and 34 in passed


def _mariadb103_with(tmp_path, at: int, new: list[bytes]) -> Path:
    return spliced(std_data(MARIADB103), tmp_path, at, new)


@pytest.mark.parametrize("etype,name", [(200, None), (42, "GTID_TAGGED_LOG_EVENT"), (1, "START_EVENT_V3"),
                                        (6, "LOAD_EVENT")])
def test_an_event_type_pull_does_not_read_stops_it_there_by_name(monkeypatch, tmp_path, etype, name):
    """Between transactions: what came before is read, then pull stops naming the type, the file,
    the position and what to do; a window ending before the event reads to its head."""
    path = _mariadb103_with(tmp_path, 693, [event(etype, b"\x00" * 12)])
    events, state, error, _ = read_both(path, monkeypatch)
    assert [e.ddl_query for e in events] == ["create table t1 (f1 timestamp, f2 timestamp)",
                                             "insert t1 values (NULL, NULL)"]
    assert error is not None and error.code == UPSTREAM_BINLOG
    what = (f"a {name} (binlog event type {etype})" if name
            else f"an event of type {etype}, which cdcflow does not know,")
    assert f"pull stops at {what} at {path.name}:693 (end_log_pos {693 + 19 + 12 + 4})" in error.message
    assert "report it" in error.hint and "re-copied" in error.hint
    assert state[0] == Position(path.name, 620)  # where a changefeed resumes: before the event

    events, state, error, _ = read_both(path, monkeypatch, head=Position(path.name, 693))
    assert error is None and len(events) == 2 and state[0] == Position(path.name, 620)


def test_an_unknown_event_inside_a_transaction_stops_pull(monkeypatch, tmp_path):
    path = _mariadb103_with(tmp_path, 524, [event(250, b"")])  # after the GTID of the second transaction
    events, state, error, _ = read_both(path, monkeypatch)
    assert len(events) == 1 and "type 250" in error.message and f"{path.name}:524 " in error.message


@pytest.mark.parametrize("etype,words,hint", [
    (26, "an incident", "compare the tables downstream"),
    (166, "MariaDB compressed (log_bin_compress=ON)", "SET GLOBAL log_bin_compress=OFF"),
    (169, "MariaDB compressed (log_bin_compress=ON)", "SET GLOBAL log_bin_compress=OFF"),
])
def test_an_event_pull_refuses_says_why_and_what_to_do(monkeypatch, tmp_path, etype, words, hint):
    path = _mariadb103_with(tmp_path, 693, [event(etype, b"\x01" * 20)])
    _events, _state, error, _ = read_both(path, monkeypatch)
    assert f"{event_types.NAMES[etype]} (binlog event type {etype}) at {path.name}:693" in error.message
    assert words in error.message and hint in error.hint


def test_events_pulled_over_on_purpose_change_nothing(monkeypatch, tmp_path):
    """A Rows_query, group replication's, a heartbeat, an ignorable event, an XA prepare (its
    transaction is steered by its Query events), MariaDB's annotate: read as without them."""
    original = read_both(std_data(MARIADB103), monkeypatch)
    extra = [event(t, b"\x00" * 16, flags=0x80) for t in (28, 29, 36, 37, 41, 160, 38)]
    path = _mariadb103_with(tmp_path, 897, extra)  # before the STOP event: nothing after it moves
    events, state, error, _ = read_both(path, monkeypatch)
    assert error is None and events == original[0] and state == original[1]


# ---- create -----------------------------------------------------------------------------------

FULL = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL"}


@pytest.mark.parametrize("extra", [
    {},  # MariaDB lacks MySQL's two variables: not checked
    {"log_bin_compress": "OFF"},
    {"binlog_transaction_compression": "ON", "binlog_row_value_options": ""},  # MySQL 8: read (zstandard)
    {"binlog_transaction_compression": "OFF", "binlog_row_value_options": ""},
])
def test_create_accepts_what_pull_reads(extra):
    check_binlog_variables({**FULL, **extra}, "up", "cf")


@pytest.mark.parametrize("extra,fix", [
    ({"binlog_transaction_compression": "OFF", "binlog_row_value_options": "PARTIAL_JSON"},
     "SET GLOBAL binlog_row_value_options=''"),
    ({"log_bin_compress": "ON"}, "SET GLOBAL log_bin_compress=OFF"),
])
def test_create_refuses_what_pull_refuses_by_name(extra, fix):
    with pytest.raises(CdcflowError) as e:
        check_binlog_variables({**FULL, **extra}, "up", "cf")
    var, value = next((k, v) for k, v in extra.items() if v in ("PARTIAL_JSON", "ON"))
    assert e.value.changefeed == "cf" and e.value.code == UPSTREAM_BINLOG
    assert f"has {var}={value}" in e.value.message and fix in e.value.hint


def test_create_reads_the_variables_a_mariadb_upstream_has(mariadb_pair):
    """The query names MySQL's variables too: a MariaDB upstream, which lacks them, passes."""
    from cdcflow.core.uri import parse_source_uri
    from cdcflow.source.binlog import check_upstream

    up, _ = mariadb_pair
    assert up.query("SHOW GLOBAL VARIABLES LIKE 'binlog_transaction_compression'") == []
    assert up.query("SHOW GLOBAL VARIABLES LIKE 'log_bin_compress'") == [("log_bin_compress", "OFF")]
    check_upstream(parse_source_uri(up.uri))


def test_create_names_every_setting_to_change_at_once():
    """Two wrong settings and a refused one: one error names all three and the statements that fix
    them (before, each try named one, then the next)."""
    got = {**FULL, "binlog_row_image": "MINIMAL", "binlog_row_metadata": "MINIMAL", "log_bin_compress": "ON"}
    with pytest.raises(CdcflowError) as e:
        check_binlog_variables(got, "up", "cf")
    for var, fix in (("binlog_row_image", "SET GLOBAL binlog_row_image='FULL'"),
                     ("binlog_row_metadata", "SET GLOBAL binlog_row_metadata='FULL'"),
                     ("log_bin_compress", "SET GLOBAL log_bin_compress=OFF")):
        assert f"{var}={got[var]}" in e.value.message and fix in e.value.hint, str(e.value)
    assert "they survive a restart" in e.value.hint


def test_cli_create_names_both_wrong_binlog_settings_of_a_real_upstream(mariadb_pair, cdcflow_home, capsys):
    """`cdcflow changefeed create` against a MariaDB upstream with binlog_row_image and
    binlog_row_metadata both MINIMAL: its one error line names both."""
    from cdcflow import cli

    up, down = mariadb_pair
    up.execute("SET GLOBAL binlog_row_image='MINIMAL'", "SET GLOBAL binlog_row_metadata='MINIMAL'")
    try:
        capsys.readouterr()
        rc = cli.main(["changefeed", "create", "-c", "two-wrong", "--source-uri", up.uri, "--sink-uri", down.uri])
        err = capsys.readouterr().err
    finally:
        up.execute("SET GLOBAL binlog_row_image='FULL'", "SET GLOBAL binlog_row_metadata='FULL'")
    assert rc != 0 and err.startswith("Error: changefeed two-wrong: the upstream"), err
    assert "binlog_row_image=MINIMAL" in err and "binlog_row_metadata=MINIMAL" in err, err
    assert "SET GLOBAL binlog_row_image='FULL'; SET GLOBAL binlog_row_metadata='FULL'" in err, err
