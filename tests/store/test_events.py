import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cdcflow.core.event import Event
from cdcflow.core.row_codec import encode_image
from cdcflow.store import events as store_events
from cdcflow.store.events import EVENT_SCHEMA, FIELDS, IMAGE_BYTES, PULL_ENV, STORED_SCHEMA, RunFolder


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def event(i: int) -> Event:
    if i % 5 == 4:
        return Event(commit_ts=1000 + i, seq=0, schema="db", table="t", op="ddl",
                     ddl_query=f"ALTER TABLE t COMMENT '{i}'", ddl_schema="db", sql_mode="ANSI_QUOTES",
                     gtid=f"0-1-{i}", start_file="mysql-bin.000001", start_pos=4 + i, end_file="mysql-bin.000001",
                     end_pos=5 + i, event_time=1_795_000_000 + i)
    return Event(commit_ts=1000 + i, seq=i % 3, schema="db", table="t", op="insert",
                 after=encode_image({"id": i, "v": "x" * i}), pk='["id"]', gtid=f"0-1-{i}",
                 start_file="mysql-bin.000001", start_pos=4 + i, end_file="mysql-bin.000001", end_pos=5 + i,
                 event_time=1_795_000_000 + i)


def test_schema_matches_the_event_type():
    assert set(FIELDS) == {f.name for f in dataclasses.fields(Event)}


@pytest.mark.parametrize("writer", ["compiled", "python"])
def test_writer_flushes_row_groups_and_reads_back(tmp_path, monkeypatch, writer):
    """Both writers (the compiled columns and the reference's tuples, store.events.PULL_ENV)."""
    monkeypatch.setenv(PULL_ENV, writer)
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    w = folder.writer("raw", batch_rows=4)
    events = [event(i) for i in range(10)]
    for e in events:
        w.add(e)
    assert w.count == 10
    # two full row groups are already written, the last two events wait in the buffer
    assert (w.columns is None) == (writer == "python")
    assert w.held == 2
    w.close()
    f = pq.ParquetFile(folder.path("raw") + "/part-00000.parquet")
    assert f.metadata.num_row_groups == 3
    assert [f.metadata.row_group(i).num_rows for i in range(3)] == [4, 4, 2]
    assert f.schema_arrow == STORED_SCHEMA
    table = pq.read_table(folder.path("raw"))
    # each event's fields, and beside them the bytes of its images (barrier counts them)
    assert table.to_pylist() == [{**dataclasses.asdict(e), IMAGE_BYTES: _image_bytes(e)} for e in events]
    assert folder.has_image_bytes("raw")


def _image_bytes(e: Event) -> int:
    return len((e.before or "").encode()) + len((e.after or "").encode())


def test_a_folder_written_before_the_images_sizes_says_it_lacks_them(tmp_path):
    """A window an earlier release pulled (its files of the events' own fields): readers are told,
    and count the images instead (stages.barrier.segment_counts)."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    assert not folder.has_image_bytes("raw")  # no folder at all
    folder.write_table("raw/part-00000.parquet", pa.Table.from_pylist(
        [dataclasses.asdict(event(i)) for i in range(3)], schema=EVENT_SCHEMA))
    assert not folder.has_image_bytes("raw")
    scanned = folder.scanner("raw").to_table()
    assert scanned.column(IMAGE_BYTES).null_count == 3 and scanned.column("after").to_pylist()[0] is not None


def test_empty_window_still_gives_a_readable_file(tmp_path):
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    w = folder.writer("raw", batch_rows=4)
    w.close()
    table = pq.read_table(folder.path("raw"))
    assert table.num_rows == 0
    assert table.schema == STORED_SCHEMA


def test_exact_multiple_of_batch_rows(tmp_path):
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    w = folder.writer("raw", batch_rows=3)
    for i in range(6):
        w.add(event(i))
    w.close()
    f = pq.ParquetFile(folder.path("raw") + "/part-00000.parquet")
    assert [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)] == [3, 3]


def test_json_files(tmp_path):
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    assert not folder.exists("window.json")
    data = {"start_ts": 1, "resolved_ts": 2**63 - 1, "end_pos": {"file": "b", "pos": 4}, "names": ["ü", None]}
    folder.write_json("window.json", data)
    assert folder.exists("window.json")
    assert folder.read_json("window.json") == data
    folder.write_json("window.json", [1, 2])  # overwritten, not appended
    assert folder.read_json("window.json") == [1, 2]


def test_airflow_run_ids_become_safe_folder_names(tmp_path):
    folder = RunFolder(str(tmp_path / "store"), "cf-1", "manual__2026-11-22T04:00:00+00:00")
    assert folder.url == str((tmp_path / "store" / "cf-1" / "manual__2026-11-22T04_00_00_00_00").resolve())
    assert folder.path("raw") == folder.url + "/raw"
    folder.write_json("x.json", 1)
    assert (Path(folder.url) / "x.json").is_file()
    for ch in ":+ /\\?#%":
        assert ch not in Path(folder.url).name
    assert RunFolder(str(tmp_path), "cf", "scheduled__2026-11-22T04:05:00.123456+00:00").url.endswith(
        "/cf/scheduled__2026-11-22T04_05_00.123456_00_00")
    # a folder name cannot climb out of the store
    assert RunFolder(str(tmp_path / "store"), "../evil", "../../x").url.startswith(str((tmp_path / "store").resolve()))


def test_default_base_is_under_cdcflow_home(home):
    folder = RunFolder(None, "cf", "r")
    assert folder.url == str((home / "events" / "cf" / "r").resolve())


def test_file_url_base(tmp_path):
    folder = RunFolder("file://" + str(tmp_path / "store"), "cf", "r")
    assert folder.url == str((tmp_path / "store" / "cf" / "r").resolve())
    folder.write_json("a.json", {"ok": True})
    assert (tmp_path / "store" / "cf" / "r" / "a.json").is_file()


def test_remove(tmp_path):
    folder = RunFolder(str(tmp_path / "store"), "cf", "r")
    folder.remove()  # nothing there yet: no error
    folder.write_json("a.json", 1)
    w = folder.writer("raw", batch_rows=2)
    w.add(event(0))
    w.close()
    other = RunFolder(str(tmp_path / "store"), "cf", "r2")
    other.write_json("b.json", 2)
    folder.remove()
    assert not Path(folder.url).exists()
    assert not folder.exists("a.json")
    assert other.read_json("b.json") == 2


@pytest.mark.parametrize("changefeed_id, run", [("cf", ".."), ("cf", "."), ("..", "r"), (".", "..")])
def test_dot_names_stay_inside_their_own_folder(tmp_path, changefeed_id, run):
    store = (tmp_path / "store").resolve()
    folder = RunFolder(str(store), changefeed_id, run)
    rel = Path(folder.url).relative_to(store)  # raises if the folder is outside the store
    assert len(rel.parts) == 2
    # removing such a run must not take the changefeed's other runs with it
    sibling = RunFolder(str(store), changefeed_id, "other")
    sibling.write_json("keep.json", 1)
    folder.write_json("x.json", 1)
    folder.remove()
    assert sibling.read_json("keep.json") == 1


def test_writer_holds_at_most_its_rows_or_bytes(tmp_path, monkeypatch):
    """A row group goes out at batch_rows events or BATCH_BYTES of images, whichever comes
    first; held_rows / held_bytes say the most the writer held at once."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    w = folder.writer("raw", batch_rows=7)
    for i in range(30):
        w.add(event(i))
    w.close()
    assert w.held_rows == 7
    assert pq.ParquetFile(folder.part_file("raw")).metadata.num_row_groups == 5
    monkeypatch.setattr(store_events, "BATCH_BYTES", 1000)
    w = folder.writer("bytes", batch_rows=1000)
    big = [dataclasses.replace(event(i), after=encode_image({"id": i, "v": "y" * 300})) for i in range(3, 40, 5)]
    for e in big:
        w.add(e)
    w.close()
    size = len(big[0].after)
    assert 1000 <= w.held_bytes < 1000 + size and w.held_rows == -(-1000 // size)
    groups = pq.ParquetFile(folder.part_file("bytes")).metadata
    assert groups.num_row_groups == -(-len(big) // w.held_rows) and groups.num_rows == len(big)


def test_a_batch_the_writers_thread_cannot_write_fails_the_writer(tmp_path, monkeypatch):
    """The compiled columns' batches are written by a thread of the writer's (EventWriter.
    _write_behind): its error is raised by the next batch or by close, not lost."""
    monkeypatch.setenv(PULL_ENV, "compiled")

    class Broken:
        def __init__(self, sink):
            self.sink = sink

        def write_batch(self, batch):
            raise OSError("the disk is full")

        def close(self):
            pass

    monkeypatch.setattr(store_events, "_event_file", Broken)
    w = RunFolder(str(tmp_path / "store"), "cf", "run1").writer("raw", batch_rows=4)
    with pytest.raises(OSError, match="the disk is full"):
        for i in range(10):
            w.add(event(i))
        w.close()


def test_a_window_past_the_kept_bounds_does_not_wait_for_what_was_kept_to_be_written(tmp_path, monkeypatch):
    """Where the window outgrows the bounds, the batches kept so far go to the writer's thread
    and pull goes on filling the next: it waits for one batch to be written, as for any batch,
    not for all of them (a stall of half a second at a catch-up's 500,000 events).  Here the
    thread writes a batch only when let: with three batches kept and the fourth past the bound,
    the fifth is taken once a single batch is written; close then writes every event, in order."""
    import threading

    monkeypatch.setenv(PULL_ENV, "compiled")
    let, real = threading.Semaphore(0), store_events._event_file

    class Held:
        def __init__(self, sink):
            self.out = real(sink)

        def write_batch(self, batch):
            assert let.acquire(timeout=60)
            self.out.write_batch(batch)

        def close(self):
            self.out.close()

    monkeypatch.setattr(store_events, "_event_file", Held)
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    w = folder.writer("raw", batch_rows=2, keep=(6, 10_000))
    for i in range(9):  # batches of 2: three kept, the fourth past the bound, the fifth filling
        w.add(event(i))
    assert len(w._written) == 4 and not any(f.done() for f in w._written)
    fifth = threading.Thread(target=w.add, args=(event(9),))
    fifth.start()
    let.release()  # one batch written
    fifth.join(30)
    assert not fifth.is_alive(), "the fifth batch waited for more than one batch to be written"
    for _ in range(4):
        let.release()
    w.close()
    assert not folder.kept("raw")
    assert folder.scanner("raw").to_table()["commit_ts"].to_pylist() == list(range(1000, 1010))


@pytest.mark.parametrize("writer", ["compiled", "python"])
def test_a_window_its_binlog_says_will_outgrow_the_bounds_is_let_go_early(tmp_path, monkeypatch, writer):
    """Ten events at binlog positions 4-13 of mysql-bin.000001 (event()): where the window's binlog
    runs to 104, its first batch of four says it holds about a hundred events, past a bound of
    twelve by far, so nothing is kept and every batch is written as it comes; where it runs to 14
    the same events are kept.  Over several files the window's bytes are summed: 1,000 more in the
    file after let it go, 1,000 in the file before (the part read then holds them) keep it.
    Positions in a file the spans do not name say nothing."""
    monkeypatch.setenv(PULL_ENV, writer)
    one, two = "mysql-bin.000001", "mysql-bin.000002"
    for spans, kept in (([(one, 4, 104)], False), ([(one, 4, 14)], True), ([(one, 4, 14), (two, 4, 1004)], False),
                        ([("mysql-bin.000000", 4, 1004), (one, 4, 14)], True), ([(two, 4, 104)], True)):
        folder = RunFolder(str(tmp_path / "store"), "cf", f"run-{len(spans)}-{spans[-1][2]}-{spans[0][0]}")
        w = folder.writer("raw", batch_rows=4, keep=(12, 10_000), spans=spans)
        for i in range(10):
            w.add(event(i))
        if not kept:
            assert folder.exists("raw")  # written as it came, before close
        w.close()
        assert folder.kept("raw") == kept and folder.exists("raw") != kept
        assert folder.scanner("raw").to_table()["commit_ts"].to_pylist() == list(range(1000, 1010))


def _written(folder: RunFolder, n: int, keep, batch_rows: int = 4) -> None:
    w = folder.writer("raw", batch_rows=batch_rows, keep=keep)
    for i in range(n):
        w.add(event(i))
    w.close()


def _from_files(folder: RunFolder, name: str, **scan) -> pa.Table:
    import pyarrow.dataset as pads

    files = pads.dataset(folder.path(name), schema=STORED_SCHEMA, format="parquet")
    return files.scanner(**scan).to_table()


@pytest.mark.parametrize("writer", ["compiled", "python"])
def test_a_kept_folder_reads_the_rows_its_files_hold(tmp_path, monkeypatch, writer):
    """Both writers keep the batches they write; the stages' scans of the kept folder give what
    the same scans of its files give, whole, by columns and under a filter."""
    import pyarrow.compute as pc

    monkeypatch.setenv(PULL_ENV, writer)
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    _written(folder, 10, keep=(10, 10_000))
    assert folder.kept("raw")
    where = (pc.field("commit_ts") > 1002) & (pc.field("op") != "ddl")
    for scan in ({}, {"columns": ["commit_ts", "after", IMAGE_BYTES], "where": where}):
        kept = folder.scanner("raw", **scan).to_table()
        files = {"columns": scan.get("columns"), "filter": scan.get("where")}
        assert kept.num_rows and kept.equals(_from_files(folder, "raw", **files))
    assert [r["commit_ts"] for r in folder.scanner("raw", where).to_table().to_pylist()] == \
        [1003, 1005, 1006, 1007, 1008]
    # the rows of a kept batch that match as one run are that batch's memory, not a copy of its images
    run = folder.scanner("raw", (pc.field("commit_ts") > 1000) & (pc.field("commit_ts") <= 1003), ["after"]).to_table()
    assert run["after"].to_pylist() == [event(i).after for i in (1, 2, 3)]
    assert run["after"].chunk(0).buffers()[2].address == folder._kept["raw"][1][0].column("after").buffers()[2].address


@pytest.mark.parametrize("keep", [None, (9, 10_000), (10, 100)], ids=["unasked", "rows", "bytes"])
def test_a_folder_past_the_kept_bounds_is_read_from_its_files(tmp_path, keep):
    """Nothing is kept unasked, nor past either bound (10 events whose images hold 152 bytes):
    the files are then the folder's only copy, every event in them in its order (the batches
    kept until a bound broke written first)."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    _written(folder, 10, keep=keep)
    assert not folder.kept("raw")
    assert folder.scanner("raw").to_table()["commit_ts"].to_pylist() == list(range(1000, 1010))


@pytest.mark.parametrize("writer", ["compiled", "python"])
def test_a_kept_folder_is_written_only_when_read_by_its_path(tmp_path, monkeypatch, writer):
    """A folder kept within the bounds has no file until something reads it by its path (Spark)
    or the process hands it on (persist): then its files hold the kept rows, and it stays kept.
    Another process never reads a folder left unwritten as an empty window: it finds no folder."""
    monkeypatch.setenv(PULL_ENV, writer)
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    _written(folder, 10, keep=(10, 10_000))
    assert folder.kept("raw") and not folder.exists("raw")
    assert folder.has_image_bytes("raw") and not folder.exists("raw")
    with pytest.raises(FileNotFoundError):
        RunFolder.at(folder.url).scanner("raw")

    assert _from_files(folder, "raw").equals(folder.scanner("raw").to_table())  # path() wrote them
    assert folder.kept("raw")
    assert RunFolder.at(folder.url).scanner("raw").to_table()["commit_ts"].to_pylist() == list(range(1000, 1010))


@pytest.mark.parametrize("writer", ["compiled", "python"])
def test_a_kept_folder_once_written_is_the_file_its_writer_would_have_written(tmp_path, monkeypatch, writer):
    """The file persist writes is the event writer's, byte for byte: the same row groups."""
    monkeypatch.setenv(PULL_ENV, writer)
    files = {}
    for keep in (None, (100, 10_000)):
        folder = RunFolder(str(tmp_path / "store"), "cf", f"run-{bool(keep)}")
        _written(folder, 10, keep=keep)
        folder.persist()
        with open(folder.part_file("raw"), "rb") as f:
            files[keep is None] = f.read()
        assert pq.ParquetFile(folder.part_file("raw")).num_row_groups == 3
    assert files[True] == files[False]


def test_persist_writes_every_folder_kept_unwritten(tmp_path):
    """persist() (what the DAG's pull task does before its stage tasks run elsewhere) writes each
    folder kept unwritten, an empty one as a readable empty file, and nothing written again."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    _written(folder, 10, keep=(100, 10_000))
    folder.write_batches("filtered", [], keep=(100, 10_000))
    _written(folder, 10, keep=None)  # "raw" again, written as it goes
    folder.writer("other", keep=(100, 10_000)).close()
    assert {n: folder.exists(n) for n in ("raw", "filtered", "other")} == {"raw": True, "filtered": False,
                                                                           "other": False}
    folder.persist()
    other = RunFolder.at(folder.url)
    assert [other.scanner(n).to_table().num_rows for n in ("raw", "filtered", "other")] == [10, 0, 0]
    assert folder.kept("filtered") and folder.kept("other") and not folder.kept("raw")


def test_filters_copy_is_kept_as_pulls_window_is(tmp_path):
    """Batches written whole (filter's copy) are kept within the bounds, as the event writer's are."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    batch = pa.RecordBatch.from_pylist([dataclasses.asdict(event(i)) for i in range(6)], schema=EVENT_SCHEMA)
    folder.write_batches("filtered", [batch.slice(0, 4), batch.slice(4)], keep=(6, 10_000))
    assert folder.kept("filtered")
    assert folder.scanner("filtered").to_table().equals(_from_files(folder, "filtered"))
    folder.write_batches("filtered", [batch.slice(0, 4), batch.slice(4)], keep=(5, 10_000))
    assert not folder.kept("filtered") and folder.scanner("filtered").to_table().num_rows == 6


def test_a_kept_folder_written_again_is_read_from_its_files(tmp_path):
    """Another write of the folder (here, or a file another process adds) ends what was kept;
    removing the folder lets it go."""
    folder = RunFolder(str(tmp_path / "store"), "cf", "run1")
    _written(folder, 10, keep=(100, 10_000))
    assert folder.kept("raw")
    folder.write_batches("raw", [pa.RecordBatch.from_pylist([dataclasses.asdict(event(0))], schema=EVENT_SCHEMA)])
    assert not folder.kept("raw")
    assert folder.scanner("raw").to_table().num_rows == 1

    _written(folder, 10, keep=(100, 10_000))
    assert folder.kept("raw")
    other = RunFolder.at(folder.url)  # another process's view of the folder: it keeps nothing
    assert not other.kept("raw")
    other.writer("raw", part=1).close()  # an empty part it adds
    assert not folder.kept("raw")
    assert folder.scanner("raw").to_table().num_rows == 10

    _written(folder, 10, keep=(100, 10_000))
    folder.remove()
    assert not folder.kept("raw") and not folder._kept


def test_a_remote_event_store_s_filesystem_is_registered_though_a_local_one_loads_none(tmp_path):
    """RunFolder binds a local folder without pyarrow.fs (its import registers S3, GCS and HDFS:
    15 ms in every process); a remote URL imports it first, so its scheme is known.  In a fresh
    process: this one may have imported pyarrow.fs already."""
    import subprocess
    import sys

    code = ("import sys\nfrom cdcflow.store.events import RunFolder\n"
            f"RunFolder({str(tmp_path)!r}, 'cf', 'run1')\n"
            "assert 'pyarrow.fs' not in sys.modules and 'pyarrow.parquet' not in sys.modules, 'loaded'\n"
            "folder = RunFolder.at('s3://bucket/events/cf/run1?region=us-east-1')\n"
            "print(type(folder.fs).__name__, folder.root, folder.fs.region)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["S3FileSystem", "bucket/events/cf/run1", "us-east-1"], proc.stdout


def test_batches_whose_texts_pass_a_huge_page_are_what_the_reference_writes_kept_or_written(tmp_path, monkeypatch):
    """A compiled string column of 2 MiB or more goes to Arrow in its own mapping, not copied
    (core/compiled_columns.pyx: _Mapped), and the next batch maps its own: three batches of
    images of 2.4 MB each (the `before` column only nulls, the small columns copied), kept in
    memory while the later ones fill, then written: the rows and the file's bytes are the
    reference's (the Python writer's tuples)."""
    big = [Event(commit_ts=2000 + i, seq=0, schema="db", table="t", op="insert",
                 after=encode_image({"id": i, "v": chr(ord("a") + i % 26) * 80_000 + f"·{i}"}), pk='["id"]',
                 gtid=f"0-1-{i}", start_file="mysql-bin.000001", start_pos=4 + i, end_file="mysql-bin.000001",
                 end_pos=5 + i, event_time=1_795_000_000 + i) for i in range(90)]
    (compiled, compiled_file), (python, python_file) = (_kept_then_written(tmp_path, monkeypatch, way, big, 30)
                                                        for way in ("compiled", "python"))
    assert pq.ParquetFile(pa.BufferReader(compiled_file)).num_row_groups == 3
    compiled, python = pa.Table.from_batches(compiled), pa.Table.from_batches(python)
    assert compiled["after"].nbytes > 3 * 2 * 1024 * 1024
    assert compiled.to_pylist() == python.to_pylist() == [{**dataclasses.asdict(e), IMAGE_BYTES: _image_bytes(e)}
                                                          for e in big]
    assert compiled_file == python_file


def test_columns_null_in_a_whole_batch_share_one_zero_buffer_and_read_as_the_reference(tmp_path, monkeypatch):
    """A compiled column null in every row of its batch (core/compiled_columns.pyx: _all_null)
    takes no memory of its own: its validity and its offsets or values are slices of one buffer of
    zeros, shared by every such column of every batch; a column with one value keeps its own.
    The rows kept and the file written are the reference's (the Python writer's tuples)."""
    rows = [dataclasses.replace(event(i), ddl_query=None, ddl_schema=None, sql_mode=None, op="insert")
            for i in range(0, 60) if i % 5 != 4]
    rows[-1] = dataclasses.replace(rows[-1], sql_mode="ANSI_QUOTES")  # the last batch's sql_mode has a value
    (compiled, compiled_file), (python, python_file) = (_kept_then_written(tmp_path, monkeypatch, way, rows, 20)
                                                        for way in ("compiled", "python"))
    assert [b.num_rows for b in compiled] == [20, 20, 8]
    null = {b.column(name).buffers()[1].address for b in compiled for name in ("start_ts", "ddl_query", "ddl_schema")}
    null |= {b.column("sql_mode").buffers()[1].address for b in compiled[:2]}
    assert len(null) == 1, null  # one buffer: every such column's second buffer starts at its start
    assert compiled[2].column("sql_mode").buffers()[1].address not in null
    assert [r for b in compiled for r in b.to_pylist()] == [r for b in python for r in b.to_pylist()]
    assert compiled_file == python_file


def _kept_then_written(tmp_path, monkeypatch, writer: str, rows: list[Event], batch_rows: int):
    """`rows` written by `writer` ("compiled" or "python") into a folder kept in memory: its
    batches as the stages after pull read them, and the file's bytes once it is written."""
    monkeypatch.setenv(PULL_ENV, writer)
    folder = RunFolder(str(tmp_path / "store"), "cf", writer)
    w = folder.writer("raw", batch_rows=batch_rows, keep=(1_000, 1 << 30))
    for e in rows:
        w.add(e)
    w.close()
    assert folder.kept("raw")
    batches = list(folder.scanner("raw").to_batches())
    folder.persist()
    with open(folder.part_file("raw"), "rb") as f:
        return batches, f.read()
