"""The initial copy of a changefeed (`cdcflow changefeed create … --snapshot`).

Consistency (TiCDC's and DM's way): the changefeed starts at a consistent point taken before
any chunk is read (point.py); each key-range chunk is then read in its own consistent-snapshot
transaction, at whatever later moment its Spark task runs, and written with REPLACE
(copy.py).  The binlog from the point holds every change after it as full row images, and
the changefeed's first cycle replays it in safe mode (REPLACE / DELETE by key), so a change
made before a chunk's read is applied again over the copied row and converges to the same
image, and a change after it is applied once.  A keyless table has no key to replay onto: it
is read as one chunk inside the point's own transaction, exactly at the point, and so its
replay applies every change once.  chunk_copies.py plans, records and resumes the chunks;
deferred_indexes.py builds the secondary indexes the tables were created without, once a
cycle has replayed past the copy's last read.

The package imports none of its modules: every cycle loads deferred_indexes.py after apply,
and only a command that copies loads the planner (chunk_copies.py, with copy.py and verify/,
10 ms of a cycle's start)."""
