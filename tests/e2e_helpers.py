"""Helpers for end-to-end tests: create a changefeed on the shared MariaDB pair, run cycles."""

from __future__ import annotations

import json

from cdcflow import cli
from cdcflow.devtools.compare import compare
from cdcflow.store import metastore


def create_changefeed(capsys, up, down, cid: str, config: str = "", *extra: str) -> dict:
    args = ["changefeed", "create", "-c", cid, "--source-uri", up.uri, "--sink-uri", down.uri]
    if config:
        path = _write_config(cid, config)
        args += ["--config", str(path)]
    capsys.readouterr()
    rc = cli.main(args + list(extra))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out.split("\n", 2)[2])


def _write_config(cid: str, text: str):
    from cdcflow.core.home import home

    path = home() / f"{cid}.toml"
    path.write_text(text)
    return path


def query(capsys, cid: str) -> dict:
    return cli_json(capsys, "changefeed", "query", "-c", cid)


def cli_json(capsys, *args: str) -> dict:
    """A command that must succeed: the JSON it prints."""
    capsys.readouterr()
    rc = cli.main(list(args))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def assert_consistent(up, down, schemas: list[str]) -> None:
    with up.connect() as u, down.connect() as d:
        diffs = compare(u, d, schemas=schemas)
    assert not diffs, "\n".join(str(x) for x in diffs)


def cli_run(capsys, cid: str) -> tuple[int, str]:
    """`cdcflow changefeed run -c cid` (reusing the test's Spark session): (exit code, stderr)."""
    capsys.readouterr()
    rc = cli.main(["changefeed", "run", "-c", cid])
    return rc, capsys.readouterr().err


def cli_ok(capsys, *args: str) -> None:
    capsys.readouterr()
    rc = cli.main(list(args))
    assert rc == 0, capsys.readouterr().err


def run_fails(capsys, cid: str) -> tuple[dict, str, int]:
    """Run one cycle that must leave the changefeed failed: (status, error message, its commit ts)."""
    import re

    rc, err = cli_run(capsys, cid)
    status = query(capsys, cid)
    assert rc == 1 and status["state"] == "failed", err
    message = status["error"]["message"]
    assert message in err
    return status, message, int(re.search(r"commit ts (\d+)", message).group(1))


def backdate(cid: str, seconds: float, *fields: str) -> None:
    """Move a changefeed's clock fields into the past, so a time-based rule (backoff, stuck
    duration, gc-ttl) comes due without the test sleeping."""
    feed = metastore.get_feed(cid)
    metastore.update_feed(cid, **{f: getattr(feed, f) - seconds for f in fields})


def tables(db, schema: str) -> list[str]:
    """The tables of `schema` on a server, sorted."""
    return sorted(r[0] for r in db.query(f"SHOW TABLES FROM `{schema}`"))


def index_jobs_of(cid: str) -> list:
    """Every index job recorded for the changefeed, finished ones too (cdcflow reads only the pending)."""
    import sqlalchemy as sa

    from cdcflow.store.engine import engine
    from cdcflow.store.index_jobs import IndexJob
    from cdcflow.store.tables import index_jobs

    with engine().connect() as c:
        rows = c.execute(sa.select(index_jobs).where(index_jobs.c.changefeed_id == cid).order_by(index_jobs.c.job_id))
        return [IndexJob(**dict(r._mapping)) for r in rows]
