"""Tables a module keeps in the metadata store of its own, created on first use (so that
metastore.py need not know them)."""

from __future__ import annotations

import sqlalchemy as sa

from cdcflow.store import metastore

_ready: set[tuple[int, str]] = set()


def engine(md: sa.MetaData) -> sa.Engine:
    eng = metastore.engine()
    if (id(md), str(eng.url)) not in _ready:
        md.create_all(eng)
        _ready.add((id(md), str(eng.url)))
    return eng
