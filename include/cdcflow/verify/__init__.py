"""Is the downstream equal to the upstream, for the tables a changefeed replicates?

sync-diff-inspector's method: each table is cut into key-range chunks (chunks.py); both
servers compute each chunk's checksum in SQL (checksum.py), so rows do not travel; chunks
are compared by parallel threads (comparison.py), and a chunk whose checksums differ is narrowed
by sub-chunk checksums to the rows compared row by row (rowdiff.py).  Column definitions are compared too (catalogue.py).
With a live upstream a difference counts only once the changefeed has applied what the
upstream held when it was seen (live.py).  fixsql.py writes the statements that make the
downstream equal.
"""

from cdcflow.verify.comparison import VerifyOptions, verify

__all__ = ["VerifyOptions", "verify"]
