"""Safe mode's rows written in place (row_writer.StreamingWriter's `in_place`): on the real
downstream, the same final images written over the same stale rows, once with REPLACE (safe
mode as TiCDC writes it) and once with UPSERT where the image sets every column, end in the
same rows, in InnoDB, MyISAM and Aria tables with a second unique key, whatever stale rows of
touched keys hold the images' unique values; the UPSERTs rewrite a row the downstream holds
without deleting it."""

from __future__ import annotations

import random

import pytest

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

from cdcflow.core.row_codec import encode_image
from cdcflow.sink import connection
from cdcflow.sink.row_writer import RowWriter, StreamingWriter, raw_form

DB = "in_place"
ENGINES = ("InnoDB", "MyISAM", "Aria")
TABLE = "CREATE TABLE {db}.{t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, note VARCHAR(20) " \
        "CHARACTER SET latin1, UNIQUE KEY uk_code (code)) ENGINE={engine}"
COLUMNS = frozenset({"id", "code", "v", "note"})
KEYS = {f"{DB}.{t}": ["id"] for t in ("by_replace", "in_place")}


@pytest.fixture
def conn(mariadb_pair):
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    c = connection.connect({"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD})
    yield c
    c.close()


def scenario(seed: int, tangled: bool) -> tuple[list[dict], list[int], list[dict]]:
    """(the rows downstream before the segment, the keys the segment deletes, its final images).
    The images are one state of the upstream: no two share a code, and no row the segment does
    not touch holds one of theirs (row_writer's convergence argument); stale rows of touched keys
    hold any of them where `tangled` (codes moved between keys), else codes of their own."""
    rnd = random.Random(seed)
    keys = rnd.sample(range(1, 80), 50)
    finals, deleted = keys[:35], keys[35:]
    pool = [f"c{i}" for i in range(60)]
    rnd.shuffle(pool)
    images = [{"id": k, "code": pool[i], "v": rnd.randint(0, 9), "note": rnd.choice(["ä", "plain", None])}
              for i, k in enumerate(finals)]
    stale_codes = iter(rnd.sample(pool, 60))
    before = [{"id": k, "code": next(stale_codes) if tangled else f"stale{k}", "v": -1, "note": "old"}
              for k in keys if rnd.random() < 0.7][:60]
    before += [{"id": 100 + i, "code": f"untouched{i}", "v": i, "note": "kept"} for i in range(5)]
    return before, deleted, images


def write(conn, table: str, deleted: list[int], images: list[dict], in_place: bool, batch_rows: int) -> RowWriter:
    form = raw_form()
    writer = RowWriter(conn, batch_rows, form=form)
    name = f"{DB}.{table}"
    w = StreamingWriter(writer, KEYS, key_indexed=frozenset({name}), in_place={name: COLUMNS} if in_place else None)
    for k in deleted:
        w.add(DB, table, "D", form.read(encode_image({"id": k})), 5)
    for img in images:
        w.add(DB, table, "U", form.read(encode_image(img)), 5)
    w.close()
    return writer


def rows(conn, table: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT id, code, v, HEX(note) FROM {DB}.{table} ORDER BY id")
        return list(cur.fetchall())


def handler(conn, name: str) -> int:
    with conn.cursor() as cur:
        cur.execute(f"SHOW SESSION STATUS LIKE 'Handler_{name}'")
        return int(cur.fetchone()[1])


@pytest.mark.parametrize("engine", ENGINES)
def test_upserts_in_safe_mode_end_as_the_replaces_do(conn, engine):
    fallbacks = 0
    for seed in range(12):
        tangled = seed % 2 == 1
        before, deleted, images = scenario(seed, tangled)
        batch_rows = (256, 7, 1)[seed % 3]
        deletes = {}
        for table in ("by_replace", "in_place"):
            with conn.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {DB}.{table}")
                cur.execute(TABLE.format(db=DB, t=table, engine=engine))
                cur.executemany(f"INSERT INTO {DB}.{table} VALUES (%s, %s, %s, %s)",
                                [tuple(r.values()) for r in before])
            start = handler(conn, "delete")
            writer = write(conn, table, deleted, images, table == "in_place", batch_rows)
            deletes[table] = handler(conn, "delete") - start
            if table == "in_place":
                fallbacks += writer.fallbacks
        expected = sorted([(r["id"], r["code"], r["v"], r["note"].encode("latin1").hex().upper())
                           for r in before if r["id"] >= 100]
                          + [(r["id"], r["code"], r["v"], r["note"] and r["note"].encode("latin1").hex().upper())
                             for r in images])
        assert rows(conn, "by_replace") == expected, seed
        assert rows(conn, "in_place") == expected, seed
        if not tangled:
            # the REPLACEs deleted each row their key found to insert it again, the UPSERTs rewrote it:
            # only the segment's deletes deleted
            held = {r["id"] for r in before}
            assert deletes["in_place"] == len(held & set(deleted)) < deletes["by_replace"], seed
    assert fallbacks > 0  # stale rows of other keys held the images' codes: DELETE + REPLACE ran too
