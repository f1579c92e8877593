"""sink.partitions: the whole body of a Spark partition, on a fake connection."""

import pyarrow as pa
import pymysql
import pytest
from fake_downstream import FakeConn, failing

from cdcflow.core.row_codec import encode_image
from cdcflow.sink import partitions
from cdcflow.sink.compaction import compacted_arrow, keyed_changes
from cdcflow.sink.downstream_errors import SinkError


def keyed_batches(changes, keys):
    cols = {f: [] for f in ("schema", "table", "commit_ts", "seq", "op", "before", "after")}
    for table, ts, seq, op, before, after in changes:
        for f, v in zip(cols, ("db", table, ts, seq, op, encode_image(before), encode_image(after))):
            cols[f].append(v)
    out = list(keyed_changes(iter([pa.RecordBatch.from_pydict(cols)]), keys))
    rows = compacted_arrow(pa.Table.from_batches(out)).to_pylist()  # as apply compacts them for the bodies
    return [pa.RecordBatch.from_pylist(rows[:2], schema=out[0].schema),
            pa.RecordBatch.from_pylist(rows[2:], schema=out[0].schema)]


def test_apply_partition_case_only_key_change(monkeypatch):
    conn = FakeConn()
    monkeypatch.setattr(partitions, "connect_with_retry", lambda sink: conn)
    keys = {"db.s": ["name"]}
    batches = keyed_batches([
        ("s", 10, 0, "update", {"name": "abc", "v": 1}, {"name": "ABC", "v": 1}),
        ("s", 11, 0, "insert", None, {"name": "zz", "v": 2}),
        ("s", 12, 0, "delete", {"name": "qq", "v": 3}, None),
    ], keys)
    out = list(partitions.apply_partition(iter(batches), {"host": "h", "port": 1}, 100, keys))
    assert conn.sql == [
        # every key written ends deleted first (rows REPLACEd by the upstream's key: row_writer)
        "DELETE FROM `db`.`s` WHERE `name` IN ('ABC', 'abc', 'qq', 'zz')",
        "REPLACE INTO `db`.`s` (`name`, `v`) VALUES ('ABC', 1),('zz', 2)",
    ]
    # held: the two rows REPLACEd and the two only deleted, all pending until the end
    assert out[0].to_pydict() == {"rows": [4], "statements": [2], "held": [4], "fallbacks": [0]}
    assert conn.closed


def test_apply_partition_phases_of_safe_mode_false(monkeypatch):
    """Pass 'existing' writes DELETEs and the REPLACEs of rows that were there; pass 'new'
    INSERTs the keys these changes created (the split's new key included)."""
    keys = {"db.t": ["id"]}
    changes = [("t", 10, 0, "update", {"id": 1, "v": 1}, {"id": 5, "v": 1}),   # key change: D 1, I 5
               ("t", 10, 1, "update", {"id": 2, "v": 2}, {"id": 2, "v": 9}),   # U 2
               ("t", 10, 2, "insert", None, {"id": 3, "v": 3})]                 # I 3
    sql = {}
    for phase in ("existing", "new"):
        conn = FakeConn()
        monkeypatch.setattr(partitions, "connect_with_retry", lambda sink, c=conn: c)
        list(partitions.apply_partition(iter(keyed_batches(changes, keys)), {}, 100, keys, phase))
        sql[phase] = conn.sql
    assert sql["existing"] == ["DELETE FROM `db`.`t` WHERE `id` IN (1, 2)",
                               "REPLACE INTO `db`.`t` (`id`, `v`) VALUES (2, 9)"]
    assert sql["new"] == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (3, 3),(5, 1)"]


def test_apply_partition_key_indexed_tables(monkeypatch):
    """With the table in `key_indexed`, REPLACEd rows are not deleted first (safe mode: no
    phase), and pass 'existing' writes the row that was there with INSERT … ON DUPLICATE KEY
    UPDATE; only the key that ends deleted gets a DELETE; pass 'new' writes as before."""
    keys = {"db.t": ["id"]}
    changes = [("t", 10, 0, "update", {"id": 1, "v": 1}, {"id": 5, "v": 1}),   # key change: D 1, I 5
               ("t", 10, 1, "update", {"id": 2, "v": 2}, {"id": 2, "v": 9}),   # U 2
               ("t", 10, 2, "insert", None, {"id": 3, "v": 3})]                 # I 3
    sql = {}
    for phase in (None, "existing", "new"):
        conn = FakeConn()
        monkeypatch.setattr(partitions, "connect_with_retry", lambda sink, c=conn: c)
        list(partitions.apply_partition(iter(keyed_batches(changes, keys)), {}, 100, keys, phase,
                                        key_indexed=frozenset({"db.t"})))
        sql[phase] = conn.sql
    assert sql[None] == ["DELETE FROM `db`.`t` WHERE `id` IN (1)",
                         "REPLACE INTO `db`.`t` (`id`, `v`) VALUES (2, 9),(3, 3),(5, 1)"]
    assert sql["existing"] == ["DELETE FROM `db`.`t` WHERE `id` IN (1)",
                               "INSERT INTO `db`.`t` (`id`, `v`) VALUES (2, 9) "
                               "ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `v` = VALUES(`v`)"]
    assert sql["new"] == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (3, 3),(5, 1)"]


def test_apply_partition_closes_the_connection_on_error(monkeypatch):
    conn = FakeConn(fail=failing([pymysql.err.ProgrammingError(1146, "Table 'db.s' doesn't exist")]))
    monkeypatch.setattr(partitions, "connect_with_retry", lambda sink: conn)
    keys = {"db.s": ["name"]}
    batches = keyed_batches([("s", 11, 0, "insert", None, {"name": "zz", "v": 2})], keys)
    with pytest.raises(SinkError) as e:
        list(partitions.apply_partition(iter(batches), {"host": "h", "port": 1}, 100, keys))
    assert e.value.code == 1146 and conn.closed



def test_sessions_opened_ahead_are_taken_then_kept_and_closed(monkeypatch):
    """open_ahead: the sessions are opened beside the caller; take() gives them before it opens
    another; one given back is kept; close() closes every one, the untaken too; an opening that
    failed raises where it is taken, as opening it there would."""
    import threading

    calls, opened, gate = [], [], threading.Event()

    def connect(sink):
        calls.append(sink)
        gate.wait(5)  # still opening while the caller goes on
        opened.append(FakeConn())
        return opened[-1]

    monkeypatch.setattr(partitions, "connect_with_retry", connect)
    sessions = partitions.Sessions({"host": "h", "port": 1})
    sessions.open_ahead(3)
    sessions.open_ahead(3)  # as many in all: none more
    assert not opened
    gate.set()
    first = sessions.take()
    sessions.give(first)
    assert sessions.take() is first  # the one given back
    second = sessions.take()
    assert second is not first
    sessions.give(first)
    sessions.close()  # first idle, second taken (its writer closes it), the third never taken
    assert len(calls) == len(opened) == 3  # the takes opened none of their own
    assert not second.closed and all(c.closed for c in opened if c is not second)

    def refused(sink):
        raise SinkError("connect to downstream h:1", pymysql.err.OperationalError(2003, "refused"))

    monkeypatch.setattr(partitions, "connect_with_retry", refused)
    sessions = partitions.Sessions({"host": "h", "port": 1})
    sessions.open_ahead(1)
    with pytest.raises(SinkError) as e:
        sessions.take()
    assert e.value.code == 2003
    sessions.close()


def as_share(batches):
    """The rows of `batches` as a writer's row_sink.Share holds them: each numbering its image in the
    part's images, here in another order and in two chunks (so that only the number finds it)."""
    whole = pa.Table.from_batches(batches)
    n = whole.num_rows
    order = list(range(n))[::-1]
    images = whole["image"].combine_chunks().take(pa.array(order))
    chunks = pa.chunked_array([images.slice(0, n // 2), images.slice(n // 2)])
    sources = pa.array([order.index(i) for i in range(n)], pa.int64())
    return whole.drop_columns(["image"]).append_column("source", sources), chunks


@pytest.mark.parametrize("phase", [None, "existing", "new"])
def test_rows_whose_images_stay_in_the_part_are_written_as_rows_holding_them(monkeypatch, phase):
    """A share that numbers its rows' images in the part's arrays (row_sink.Share) is written
    statement for statement as the same rows holding their images, in every pass."""
    keys = {"db.t": ["id"], "db.u": ["id"]}
    changes = [("t", 10, 0, "update", {"id": 1, "v": "a"}, {"id": 5, "v": "ä'"}),
               ("t", 10, 1, "update", {"id": 2, "v": None}, {"id": 2, "v": "中"}),
               ("u", 11, 0, "insert", None, {"id": 3, "v": "x"}),
               ("u", 12, 0, "delete", {"id": 4, "v": "y"}, None),
               ("t", 13, 0, "insert", None, {"id": 6, "v": "z"})]
    written = []
    for share in (False, True):
        conn = FakeConn()
        monkeypatch.setattr(partitions, "connect_with_retry", lambda sink, c=conn: c)
        batches = keyed_batches(changes, keys)
        if share:
            rows, images = as_share(batches)
            out = partitions.apply_partition(iter(rows.to_batches(2)), {}, 100, keys, phase, images=images)
        else:
            out = partitions.apply_partition(iter(batches), {}, 100, keys, phase)
        written.append((conn.sql, [b.to_pydict() for b in out]))
    assert written[0][0] and written[1] == written[0]
