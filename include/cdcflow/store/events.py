"""The event store: Parquet files, one folder per changefeed and cycle.

The pull stage writes raw events from the driver with pyarrow, in bounded
batches (a million-row transaction never sits in memory whole); later stages
read them with Spark, or with pyarrow in their own process.  A window small
enough to be kept in memory for the stages after pull in its process is kept
instead of written, its files written only where something else reads it
(Keeper, RunFolder.persist).  Paths are local folders by default, or any URL
that both pyarrow and Hadoop understand (hdfs://, s3a:// with the jars on the
classpath, ...).
"""

from __future__ import annotations

import json
import operator
import os
import re
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, get_args, get_type_hints

import pyarrow as pa
import pyarrow.compute as pc
# pyarrow.fs is pyarrow._fs's classes re-exported, after importing the S3, GCS and HDFS
# filesystems (5-8 ms of every process, S3's most of it); a local folder needs none of them,
# and pyarrow.parquet imports pyarrow.fs, so both are imported where a remote URL or a file is
# (remote_filesystem, _parquet)
from pyarrow._fs import FileSelector, FileSystem, FileType, LocalFileSystem

from cdcflow.core.arrow_rows import rows_batch
from cdcflow.core.event import Event
from cdcflow.config.spec_store import home

if TYPE_CHECKING:
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq


def _parquet():
    import pyarrow.parquet as pq  # lazy: it imports pyarrow.fs (above); a window kept in memory writes no file

    return pq


def remote_filesystem(url: str) -> tuple[FileSystem, str]:
    """The filesystem of a URL and the path in it; pyarrow.fs registers the remote ones."""
    import pyarrow.fs  # noqa: F401  # lazy: registers S3, GCS and HDFS, which a local folder does not need

    return FileSystem.from_uri(url)

# The Arrow and Spark schemas of the event record (core.event)
_TYPES = {int: (pa.int64(), "long"), str: (pa.string(), "string")}  # every column may be null


def _column_types(hint) -> tuple:
    (base,) = [t for t in get_args(hint) or (hint,) if t is not type(None)]
    return _TYPES[base]


_COLUMNS = {name: _column_types(hint) for name, hint in get_type_hints(Event).items()}
EVENT_SCHEMA = pa.schema([(name, arrow) for name, (arrow, _) in _COLUMNS.items()])
EVENT_SPARK_SCHEMA = ", ".join(f"`{name}` {spark}" for name, (_, spark) in _COLUMNS.items())
FIELDS = EVENT_SCHEMA.names
# Written beside an event's fields, derived from them as each batch is written: the bytes of its
# row images, which barrier counts (stages.barrier.batch_counts) without reading the images
# themselves (the window's largest columns).  A file written before it existed, or by Spark (a
# filter's copy there), lacks it: readers ask (RunFolder.has_image_bytes) and count the images.
IMAGE_BYTES = "image_bytes"
STORED_SCHEMA = EVENT_SCHEMA.append(pa.field(IMAGE_BYTES, pa.int64()))
_fields_of = operator.attrgetter(*FIELDS)  # an event's values as a tuple, in FIELDS' order
# What the event writer holds at most before it writes a row group ([cdcflow] pull-batch-rows
# sets the rows; the bytes are the images' and statements' text)
BATCH_ROWS = 50_000
BATCH_BYTES = 32 * 1024 * 1024
# source.binlog_events.READER_ENV: "python" asks for pull's Python reference, the writer's tuples too
PULL_ENV = "CDCFLOW_BINLOG_READER"


def _event_file(sink) -> pq.ParquetWriter:
    """A Parquet writer of the stored event schema on `sink`, as every event file is written."""
    return _parquet().ParquetWriter(sink, STORED_SCHEMA, compression="zstd")


def image_bytes(batch: pa.RecordBatch) -> pa.Array:
    """Each event's IMAGE_BYTES: the bytes of its before and after images, from their offsets (no
    value is read), none counting 0."""
    before, after = (pc.fill_null(pc.binary_length(batch.column(c)), 0) for c in ("before", "after"))
    return pc.add(before, after).cast(pa.int64())


def stored(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A batch of the event schema as it is stored: with IMAGE_BYTES."""
    return pa.RecordBatch.from_arrays([*batch.select(FIELDS).columns, image_bytes(batch)], schema=STORED_SCHEMA)


def _safe(name: str) -> str:
    # Airflow run ids carry ':' and '+', which Hadoop paths do not accept; a leading dot
    # would let '.' or '..' name the changefeed's (or the store's) folder instead
    return re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9_.=-]", "_", name))


def _stored_schema(columns) -> pa.Schema:
    """The event store's schema of `columns`, in their order."""
    return pa.schema([STORED_SCHEMA.field(c) for c in columns])


def _matching(batch: pa.RecordBatch, where: pc.Expression, columns) -> pa.RecordBatch | None:
    """A kept batch's rows that match `where`, `columns` of them; None where none does.  The
    mask is `where` projected over the batch, and where the rows that match are one run (a
    window's rows are in commit order) that run is sliced out, not copied; else only `columns`
    are filtered.  A scanner's filter over the kept batches copied every column of the rows it
    kept, the images too, before its projection dropped them: filter's and barrier's scans of
    the narrow columns copied the bench's bulk window's images twice (filter 49-65 ms and
    barrier 35-42 ms of the cycle, against 34-37 and 21-26 so), and apply's 60,000-row parts
    took 14-50 ms each where a slice takes 1-5 ms (docs/performance.md)."""
    import pyarrow.dataset as pads  # lazy: as RunFolder.scanner's

    mask = pc.fill_null(pads.InMemoryDataset([batch]).to_table(columns={"m": where})["m"], False)
    found = pc.indices_nonzero(mask)
    if not len(found):
        return None
    rows = batch.select(list(columns))
    first, last = found[0].as_py(), found[-1].as_py()
    return rows.slice(first, len(found)) if last - first + 1 == len(found) else rows.filter(mask)


class RunFolder:
    """The folder of one cycle of one changefeed."""

    def __init__(self, base: str | None, changefeed_id: str, run_id: str):
        base = base or str(home() / "events")
        self._bind(base.rstrip("/") + "/" + _safe(changefeed_id) + "/" + _safe(run_id))

    @classmethod
    def at(cls, url: str) -> "RunFolder":
        """The folder at `url` (another's .url): what a Spark task is given, since its
        process may not know CDCFLOW_HOME."""
        folder = cls.__new__(cls)
        folder._bind(url)
        return folder

    def _bind(self, url: str) -> None:
        self.url = url
        # per folder name: its files' listing when this process wrote them (_listing), and the
        # batches written, kept in memory (Keeper); of those, the folders whose files are not
        # written yet (persist writes them)
        self._kept: dict[str, tuple[tuple, list[pa.RecordBatch]]] = {}
        self._ranges: dict[str, list[tuple]] = {}  # of kept batches: _ts_ranges
        self._unwritten: set[str] = set()
        if "://" in url and not url.startswith("file://"):
            self.fs, self.root = remote_filesystem(self.url)
        else:
            self.fs = LocalFileSystem()
            self.root = str(Path(self.url.removeprefix("file://")).resolve())
            self.url = self.root

    def path(self, name: str) -> str:
        """A path inside the folder as Spark should read it: a folder kept unwritten is written
        first (persist), for whatever reads it by its path."""
        self.persist(name)
        return self.url + "/" + name

    def persist(self, name: str | None = None) -> None:
        """Write the files of folder `name` (None: of every folder) where this process kept its
        batches without writing them (Keeper): before another process reads the folder (the
        DAG's stage tasks after its pull task), or anything reads it by its path."""
        for one in [name] if name is not None else sorted(self._unwritten):
            if one not in self._unwritten:
                continue
            batches = self._kept[one][1]
            out = _PartFile(self.fs, self._fs_path(one), 0)
            out.write(batches)
            out.close()
            self._unwritten.discard(one)
            self._kept[one] = (self._listing(one), batches)

    def _fs_path(self, name: str) -> str:
        return self.root + "/" + name

    def write_json(self, name: str, data) -> None:
        self.fs.create_dir(self.root, recursive=True)
        with self.fs.open_output_stream(self._fs_path(name)) as f:
            f.write(json.dumps(data, indent=1, sort_keys=True).encode())

    def read_json(self, name: str):
        with self.fs.open_input_stream(self._fs_path(name)) as f:
            return json.loads(f.read().decode())

    def write_table(self, name: str, table: pa.Table) -> None:
        """An Arrow table as one Parquet file (a folder's parent made first)."""
        self.fs.create_dir(self._fs_path(name).rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(self._fs_path(name)) as f:
            _parquet().write_table(table, f, compression="zstd")

    def read_table(self, name: str) -> pa.Table:
        with self.fs.open_input_file(self._fs_path(name)) as f:
            return _parquet().read_table(f)

    def scanner(self, name: str, where: pc.Expression | None = None, columns=None, **options) -> pads.Scanner:
        """The events of folder `name` that match `where` (None: all), `columns` of them (None:
        the event schema's).  Its Parquet files are scanned by the event schema, as Spark reads
        them (files named `_*` or `.*`, Spark's markers and checksums, skipped; a column a file
        lacks read as null), with `options` (pyarrow's Dataset.scanner's).  Where this process
        wrote the folder with its batches kept (writer's `keep`) and its files are still the ones
        it wrote, the kept batches instead, in their order: the same rows, not decoded again,
        each batch's that match taken by `_matching`."""
        # lazy: pyarrow's dataset module loads pandas (0.3-0.5 s a process); a cycle without events never reads one
        import pyarrow.dataset as pads

        where = pc.scalar(True) if where is None else where
        columns = STORED_SCHEMA.names if columns is None else list(columns)
        if self.kept(name):
            found = (m for m in (_matching(b, where, columns) for b in self._kept[name][1]) if m is not None)
            return pads.Scanner.from_batches(found, schema=_stored_schema(columns))
        return pads.dataset(self._fs_path(name), schema=STORED_SCHEMA, format="parquet",
                            filesystem=self.fs).scanner(columns=columns, filter=where, **options)

    def kept_table(self, name: str, where: pc.Expression, columns, commit_ts: list[tuple[int, int]]) -> pa.Table:
        """The rows of folder `name`, which this process kept (`kept`), that match `where`,
        `columns` of them, as one table; `where` keeps no row outside the `commit_ts` spans
        ((lo, hi] each).  Only the kept batches with a commit ts in a span are looked at
        (`_matching` each): apply reads its parts so."""
        out = []
        for batch, (least, most) in zip(self._kept[name][1], self._ts_ranges(name)):
            if least is not None and not any(most > lo and least <= hi for lo, hi in commit_ts):
                continue
            found = _matching(batch, where, columns)
            if found is not None:
                out.append(found)
        return pa.Table.from_batches(out, schema=_stored_schema(columns))

    def _ts_ranges(self, name: str) -> list[tuple[int | None, int | None]]:
        """The least and most commit ts of each kept batch of folder `name`, found once."""
        if name not in self._ranges:
            self._ranges[name] = [tuple(v.as_py() for v in pc.min_max(b.column("commit_ts")).values())
                                  for b in self._kept[name][1]]
        return self._ranges[name]

    def kept(self, name: str) -> bool:
        """Whether dataset(name) reads batches this process kept: the folder's files unchanged
        since its writer closed (any other write, here or in another process, lists otherwise).
        Where another write came, the files are the folder: kept batches not written yet are
        written among them first, as the writer would have written them, and the kept copy goes."""
        held = self._kept.get(name)
        if held is None:
            return False
        if held[0] == self._listing(name):
            return True
        self.persist(name)
        self._forget(name)
        return False

    def _listing(self, name: str) -> tuple:
        return tuple(sorted((f.path, f.size, f.mtime_ns) for f in self.fs.get_file_info(
            FileSelector(self._fs_path(name), allow_not_found=True))))

    def has_image_bytes(self, name: str) -> bool:
        """Whether the Parquet files of folder `name` hold IMAGE_BYTES: all of a folder's files
        come from one writer (pull's, or the copy of one filter), so the first one says."""
        if self.kept(name):
            return True  # kept batches are stored batches, and a folder kept unwritten has no file
        files = [f for f in self.fs.get_file_info(FileSelector(self._fs_path(name), allow_not_found=True))
                 if f.type == FileType.File and f.base_name.endswith(".parquet")
                 and not f.base_name.startswith(("_", "."))]
        if not files:
            return False
        with self.fs.open_input_file(min(files, key=lambda f: f.path).path) as f:
            return IMAGE_BYTES in _parquet().read_schema(f).names

    def exists(self, name: str) -> bool:
        return self.fs.get_file_info(self._fs_path(name)).type != FileType.NotFound

    def remove(self) -> None:
        self._kept.clear()
        self._ranges.clear()
        self._unwritten.clear()
        delete_folder(self.fs, self.root)

    def remove_folder(self, name: str) -> None:
        self._forget(name)
        delete_folder(self.fs, self._fs_path(name))

    def _forget(self, name: str) -> None:
        """Let go of what this process kept of folder `name` (written again, or removed)."""
        self._kept.pop(name, None)
        self._ranges.pop(name, None)
        self._unwritten.discard(name)

    def writer(self, name: str, batch_rows: int = BATCH_ROWS, part: int = 0,
               keep: tuple[int, int] | None = None, spans: list[tuple[str, int, int]] | None = None) -> "EventWriter":
        """The writer of part `part` of folder `name`.  `keep`: (events, bytes of images): a folder
        written whole by this one writer (part 0) that stays within both is kept in memory instead
        of written (Keeper), for the stages after pull in this process to read (dataset) without
        decoding its files again: 0.4 of the bench's 2.7 CPU-seconds a cycle went to reading back
        what pull had just written, and writing them 0.4 more (docs/performance.md).  `spans`: the
        binlog the events come from, (file, start, end) of each of its files (Keeper)."""
        self._forget(name)
        keeper = self._keeper(name, None if part else keep, spans)
        return EventWriter(self.fs, self._fs_path(name), batch_rows, part, keeper)

    def write_batches(self, name: str, batches, keep: tuple[int, int] | None = None) -> None:
        """Record batches of the event schema as part 0 of folder `name` (the folder made first), a
        batch at a time: what the event writer writes, from batches already built (filter's copy).
        `keep`: as writer's."""
        self._forget(name)
        keeper, out = self._keeper(name, keep), _PartFile(self.fs, self._fs_path(name), 0)
        for batch in batches:
            keeper.take(stored(batch), out.write)
        keeper.close(out)

    def _keeper(self, name: str, keep: tuple[int, int] | None,
                spans: list[tuple[str, int, int]] | None = None) -> "Keeper":
        return Keeper(keep, lambda batches: self._hold(name, batches), spans)

    def _hold(self, name: str, batches: list[pa.RecordBatch]) -> None:
        self._kept[name] = (self._listing(name), batches)
        self._ranges.pop(name, None)
        self._unwritten.add(name)

    def part_file(self, name: str, part: int = 0) -> str:
        """The path (in `fs`) of one Parquet file of a folder the writer wrote."""
        return self._fs_path(name) + f"/part-{part:05d}.parquet"


    def restamp(self, src: str, dst: str, part: int, commit_ts: list[int], gtid_position=None) -> None:
        """Copy part `part` of folder `src` to `dst` a row group at a time, its commit_ts (a
        number into `commit_ts`) replaced by commit_ts[number], and each DDL's gtid_position
        by `gtid_position(value)` where one is given: pull's parallel path."""
        self._forget(dst)
        self.fs.create_dir(self._fs_path(dst), recursive=True)
        table = pa.array(commit_ts, pa.int64())
        where, gtids = FIELDS.index("commit_ts"), FIELDS.index("gtid_position")
        with self.fs.open_input_file(self.part_file(src, part)) as f, \
                self.fs.open_output_stream(self.part_file(dst, part)) as sink:
            source = _parquet().ParquetFile(f)
            with _event_file(sink) as out:
                for i in range(source.num_row_groups):
                    group = source.read_row_group(i)
                    group = group.set_column(where, "commit_ts", pc.take(table, group.column(where)))
                    if gtid_position is not None and group.column(gtids).null_count < len(group):
                        values = [None if v is None else gtid_position(v) for v in group.column(gtids).to_pylist()]
                        group = group.set_column(gtids, "gtid_position", pa.array(values, pa.string()))
                    out.write_table(group)


class Keeper:
    """What a writer of a folder keeps of the stored batches it is given (RunFolder.writer's `keep`:
    at most so many events and bytes of images).  `take(batch, write)` keeps it, unwritten, while
    both bounds hold: the stages after pull in this process read the kept batches, and their files
    are written only where something reads the folder otherwise (RunFolder.persist).  Past either
    bound it writes what it kept, in order, and every batch after it (the files are then the only
    copy, as for any larger window).  `close(out)` hands what is kept to `kept_to`, or closes the
    file written.

    Where the binlog the events come from is known (`spans`: the start and end byte of each of its
    files, in order), it also lets go once the part read so far says the whole will be past a
    bound by half again (OUTGROWN): a catch-up's window then has its first batches written as
    they come, not all at once when it reaches the bound, which held its pull up by their writing
    (half a second at a 2,500,000-event window, whose writer is as fast as its reader)."""

    OUTGROWN = 1.5

    def __init__(self, keep: tuple[int, int] | None, kept_to, spans: list[tuple[str, int, int]] | None = None):
        self.bounds, self.kept_to = keep, kept_to
        self.batches: list[pa.RecordBatch] | None = [] if keep else None
        self.rows = self.bytes = 0
        # per binlog file of the window: (the window's bytes in the files before it, its first byte)
        self.files: dict[str, tuple[int, int]] = {}
        self.span_bytes = 0  # the window's bytes, over every file
        for file, start, end in spans or ():
            self.files[file] = (self.span_bytes, start)
            self.span_bytes += end - start

    def take(self, batch: pa.RecordBatch, write) -> None:
        """`batch` kept, or written: write(batches), those kept before it first (one call, so that
        a writer's thread writes them while the next batch fills)."""
        if self.batches is not None:
            self.rows += batch.num_rows
            self.bytes += pc.sum(batch.column(IMAGE_BYTES)).as_py() or 0
            if self.rows <= self.bounds[0] and self.bytes <= self.bounds[1] and not self._outgrown(batch):
                self.batches.append(batch)
                return
            kept, self.batches = self.batches, None
            write([*kept, batch])
            return
        write([batch])

    def _outgrown(self, batch: pa.RecordBatch) -> bool:
        """Whether the window, at the rate its events came in the binlog read so far (up to the
        start of the last transaction in `batch`), will be past a bound by OUTGROWN."""
        if not self.files or not batch.num_rows:
            return False
        last = batch.num_rows - 1
        at = self.files.get(batch.column("start_file")[last].as_py())
        if at is None:
            return False
        before, start = at
        read = before + (batch.column("start_pos")[last].as_py() or start) - start
        if read <= 0:
            return False
        whole = self.span_bytes / read
        return self.rows * whole > self.bounds[0] * self.OUTGROWN or self.bytes * whole > self.bounds[1] * self.OUTGROWN

    def close(self, out: "_PartFile") -> None:
        if self.batches is not None:
            self.kept_to(self.batches)
        else:
            out.close()  # an empty window still gets a readable (empty) file


class _PartFile:
    """One Parquet file of a folder, the stored event schema's, opened (the folder made) at its
    first batch, or at close for an empty one."""

    def __init__(self, fs, folder: str, part: int):
        self.fs, self.folder, self.part = fs, folder, part
        self._writer: pq.ParquetWriter | None = None
        self._sink = None

    def open(self) -> pq.ParquetWriter:
        if self._writer is None:
            self.fs.create_dir(self.folder, recursive=True)
            self._sink = self.fs.open_output_stream(self.folder + f"/part-{self.part:05d}.parquet")
            self._writer = _event_file(self._sink)
        return self._writer

    def write(self, batches: list[pa.RecordBatch]) -> None:
        writer = self.open()
        for batch in batches:
            writer.write_batch(batch)

    def close(self) -> None:
        self.open().close()
        self._sink.close()


class EventWriter:
    """Columnar buffers flushed as Parquet row groups every `batch_rows` events or BATCH_BYTES of
    row images and statements, whichever comes first: what pull holds of a window (however large
    one transaction is) stays below both.  `held_rows` / `held_bytes`: the most it held at once.

    The buffers are the compiled columns (core/compiled_columns.pyx: `columns`, which the
    compiled binlog reader writes rows into itself) where they are built and the compiled reader
    is not declined (CDCFLOW_BINLOG_READER=python asks for the whole Python pull, the reference),
    else a tuple per event (core.arrow_rows); both write the same row groups.  The compiled
    columns' batches are written by a thread while the next one fills (_write_behind): the
    writer then holds up to two batches, one filling and one being written.  A window kept
    within its bounds (`keeper`) is held whole instead, and written only if it outgrows them:
    then the thread may lag behind by as many batches as were kept, no more than were held."""

    def __init__(self, fs, folder: str, batch_rows: int, part: int = 0, keeper: Keeper | None = None):
        self.batch_rows = batch_rows
        self.rows: list[tuple] = []  # one tuple per event (core.arrow_rows)
        self.bytes = 0  # the text of the buffered events' images and statements
        self._count = 0
        self.held_rows = self.held_bytes = 0
        self._file = _PartFile(fs, folder, part)
        self.columns = _compiled_columns(batch_rows, self.flush)
        self._behind: ThreadPoolExecutor | None = None  # _write_behind's thread
        self._written: deque[Future] = deque()  # its batches not known to be written, in order
        self._lag = 1  # how many of them may wait while the next batch fills
        self.before_flush = None  # called before a batch is written (the key stamper keys what waits)
        self.keeper = keeper or Keeper(None, None)  # what it keeps of its batches (RunFolder.writer's `keep`)

    @property
    def count(self) -> int:
        """The events written and held."""
        return self._count if self.columns is None else self.columns.base + self.columns.n

    @property
    def held(self) -> int:
        """The events added and not yet written."""
        return len(self.rows) if self.columns is None else self.columns.n

    def add(self, event) -> None:
        chars = len(event.before or "") + len(event.after or "") + len(event.ddl_query or "")
        if self.columns is not None:
            self.columns.add(_fields_of(event), chars)
            return
        self.rows.append(_fields_of(event))
        self._count += 1
        self.bytes += chars
        if len(self.rows) >= self.batch_rows or self.bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.before_flush is not None:
            self.before_flush()
        if self.columns is not None:
            if self.columns.n:
                self.held_rows = max(self.held_rows, self.columns.n)
                self.held_bytes = max(self.held_bytes, self.columns.chars)
                self.keeper.take(stored(self.columns.take(EVENT_SCHEMA)), self._write_behind)
            return
        if not self.rows:
            return
        self.held_rows, self.held_bytes = max(self.held_rows, len(self.rows)), max(self.held_bytes, self.bytes)
        self.keeper.take(stored(rows_batch(self.rows, EVENT_SCHEMA)), self._file.write)
        self.rows, self.bytes = [], 0

    def _write_behind(self, batches: list[pa.RecordBatch]) -> None:
        """`batches` written by a thread of the writer's while the next one fills (Parquet's
        encoding and compression run outside the GIL: a fifth of pull's time, on another core).
        It lags by one batch, or by as many as the writer kept until the window outgrew its
        bounds (Keeper): those were held already, and waiting for them all to be written held
        pull up for as long (half a second at a catch-up's 500,000 events)."""
        self._file.open()
        if self._behind is None:
            self._behind = ThreadPoolExecutor(1, thread_name_prefix="event-writer")
        self._lag = max(self._lag, len(batches))
        for batch in batches:
            self._written.append(self._behind.submit(self._file.write, [batch]))
        while len(self._written) > self._lag or (self._written and self._written[0].done()):
            self._written.popleft().result()  # written, or its error raised here

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._behind is not None:
                self._behind.shutdown()
        while self._written:
            self._written.popleft().result()
        self.keeper.close(self._file)


def _compiled_columns(batch_rows: int, on_full):
    """The compiled columns of a writer (EventWriter's), or None."""
    if os.environ.get(PULL_ENV, "compiled").lower() == "python":
        return None
    try:
        from cdcflow.core import compiled_columns  # lazy: an extension make setup may not have built
    except ImportError:
        return None  # the binlog reader says once that pull runs its Python reference
    return compiled_columns.EventColumns(FIELDS, [f.type == pa.string() for f in EVENT_SCHEMA], batch_rows,
                                         BATCH_BYTES, on_full)


def collect_garbage(base: str | None, changefeed_id: str, keep: set[str]) -> list[str]:
    """Delete the changefeed's cycle folders except those of the runs in `keep`.

    Every cycle re-reads the upstream from the checkpoint, so the raw events of any
    cycle that is no longer running are below the checkpoint or will be read again.
    """
    fs, parent = changefeed_folder(base, changefeed_id)
    if fs.get_file_info(parent).type == FileType.NotFound:
        return []
    kept = {_safe(run_id) for run_id in keep}
    removed = []
    for info in fs.get_file_info(FileSelector(parent)):
        if info.type == FileType.Directory and info.base_name not in kept:
            fs.delete_dir(info.path)
            removed.append(info.base_name)
    return sorted(removed)


def changefeed_folder(base: str | None, changefeed_id: str) -> tuple[FileSystem, str]:
    """The file system and path of the folder that holds the changefeed's cycle folders."""
    probe = RunFolder(base, changefeed_id, "_")
    return probe.fs, probe.root.rsplit("/", 1)[0]


def delete_folder(fs: FileSystem, path: str) -> None:
    if fs.get_file_info(path).type != FileType.NotFound:
        fs.delete_dir(path)
