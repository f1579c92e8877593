"""`changefeed add-tables` and `resync-tables`: a table joins the changefeed with its existing rows,
or is copied again, while the changefeed goes on (snapshot/table_join.py does the copy, a few
chunks per cycle).  Every check is made here, before anything is recorded: the CLI, the DAG's
trigger mode and the HTTP API call these functions."""

from __future__ import annotations

from cdcflow.changefeed import config_update, states
from cdcflow.config.parsing import parse_config
from cdcflow.core.errors import TABLE_COPY_REFUSED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.config.spec_store import load_spec, save_spec
from cdcflow.filter.assembled import Filter
from cdcflow.filter.table import TableFilter
from cdcflow.store import metastore, table_copies
from cdcflow.store.schema_versions import read_catalogue

# a table can join while the changefeed's cycles can still run: not once it finished or is removed
REFUSED_STATES = (states.FINISHED, states.REMOVED)


def parse_tables(text, changefeed_id: str) -> list[str]:
    """"schema.table" names from a comma-separated text (or a list), each once, in order; a name
    may quote its parts in backticks (`` `my.db`.`t` ``)."""
    items = text if isinstance(text, (list, tuple)) else str(text or "").split(",")
    out: list[str] = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        parts = _split(item)
        if parts is None:
            raise CdcflowError(f"{item!r} is not a table name: write schema.table", changefeed=changefeed_id,
                               code=TABLE_COPY_REFUSED, hint="name each table as schema.table, commas between them")
        name = ".".join(parts)
        if name not in out:
            out.append(name)
    if not out:
        raise CdcflowError("no table given", changefeed=changefeed_id, code=TABLE_COPY_REFUSED,
                           hint="name the tables as schema.table, commas between them (--tables app.b,app.c)")
    return out


def _split(item: str) -> tuple[str, str] | None:
    if item.startswith("`"):
        end = item.find("`.", 1)
        if end < 0:
            return None
        schema, rest = item[1:end], item[end + 2:]
    else:
        schema, _, rest = item.partition(".")
    table = rest[1:-1] if rest.startswith("`") and rest.endswith("`") and len(rest) > 1 else rest
    return (schema, table) if schema and table and "`" not in schema + table else None


def rule_for(table: str) -> str:
    """The filter rule that names exactly `table` ("schema.table"): both parts quoted literals."""
    schema, name = table.split(".", 1)
    return ".".join("`" + part.replace("`", "``") + "`" for part in (schema, name))


def add_tables(changefeed_id: str, tables, *, check_only: bool = False) -> dict:
    """Check, then record `tables` to join the changefeed with their rows: the filter's rules name
    them from now on, and the next cycle joins them (a table's events replicate from its join
    point, its rows are copied a few chunks per cycle).  `check_only`: refuse or return, record
    nothing (the trigger form's and the API's check before a run exists)."""
    spec, feed, names = _checked(changefeed_id, tables, replicated=False)
    cfg = spec.config()
    text = config_update.overlay(spec.config_text, config_update.to_toml(
        {"filter": {"rules": [*cfg.rules, *(rule_for(t) for t in names)]}}))
    _cascades(spec, parse_config(text), names)
    _empty_downstream(spec, names)
    if check_only:
        return {"changefeed_id": spec.id, "tables": names}
    table_copies.request(spec.id, names, table_copies.ADD)
    spec.config_text = text
    save_spec(spec)
    return {"changefeed_id": spec.id, "tables": names, "state": feed.state,
            "copies": [p for p in table_copies.progress(spec.id) if p["table"] in names]}


def joining_by_update(spec, new_text: str) -> list[str]:
    """The upstream's tables a config `update --config` lays over the changefeed's newly replicates,
    each checked as add-tables checks it (a table the changefeed would skip for want of a valid
    index is left out, as its rows would be): they join with their rows."""
    old, new = Filter.build(spec.config()), Filter.build(parse_config(new_text))
    names = []
    for (schema, name), info in sorted(_catalogue(spec).items()):
        if info.sequence or old.replicates_rows(schema, name) or not new.replicates_rows(schema, name):
            continue
        if info.valid_key() or new.config.force_replicate:
            names.append(f"{schema}.{name}")
    busy = {c["table_name"] for c in table_copies.active(spec.id)}
    names = [n for n in names if n not in busy]
    if names:
        _empty_downstream(spec, names, hint_no_copy=True)
    return names


def resync_tables(changefeed_id: str, tables, *, check_only: bool = False) -> dict:
    """Check, then record `tables` (replicated now) to be copied again: the next cycle drops each
    downstream, creates it from the upstream's definition and copies it as add-tables does."""
    spec, feed, names = _checked(changefeed_id, tables, replicated=True)
    if check_only:
        return {"changefeed_id": spec.id, "tables": names}
    table_copies.request(spec.id, names, table_copies.RESYNC)
    return {"changefeed_id": spec.id, "tables": names, "state": feed.state,
            "copies": [p for p in table_copies.progress(spec.id) if p["table"] in names]}


# a table on the wrong side of the filter, by whether it is replicated: the refusal and its remedy
_WRONG_SIDE = {
    False: ("{table} is not replicated by the changefeed",
            "to take it in with its rows: `cdcflow changefeed add-tables -c {cid} --tables {table}`"),
    True: ("{table} is replicated by the changefeed already",
           "to replace its downstream rows with a fresh copy: `cdcflow changefeed resync-tables -c {cid} "
           "--tables {table}`"),
}


def _checked(changefeed_id: str, tables, replicated: bool):
    """The spec, the feed and the table names, once each table is one the command takes: an
    upstream table with a valid index (or force-replicate), `replicated` by the filter or not,
    and not being copied already."""
    spec = load_spec(changefeed_id)
    feed = metastore.get_feed(spec.id)
    names = parse_tables(tables, spec.id)
    if feed.state in REFUSED_STATES:
        raise CdcflowError(f"a table cannot join a changefeed that is {feed.state}", changefeed=spec.id,
                           code=TABLE_COPY_REFUSED, hint="create a changefeed for the tables (create --snapshot)")
    busy = {c["table_name"]: c["status"] for c in table_copies.active(spec.id)}
    cfg = spec.config()
    flt, catalogue = Filter.build(cfg), _catalogue(spec)
    for table in names:
        if table in busy:
            raise CdcflowError(f"{table} is being copied already ({busy[table]})", changefeed=spec.id,
                               code=TABLE_COPY_REFUSED,
                               hint=f"follow it with `cdcflow changefeed query -c {spec.id}`; the cycles finish it")
        schema, name = table.split(".", 1)
        info = _upstream_table(catalogue, spec.id, schema, name)
        if flt.replicates_rows(schema, name) != replicated:
            message, hint = _WRONG_SIDE[not replicated]
            raise CdcflowError(message.format(table=table), changefeed=spec.id, code=TABLE_COPY_REFUSED,
                               hint=hint.format(cid=spec.id, table=table))
        _needs_key(spec.id, cfg, table, info)
    return spec, feed, names


def _catalogue(spec):
    from cdcflow.core.uri import parse_source_uri  # lazy: credentials and TLS, 8 ms of every command's start

    conn = parse_source_uri(spec.source_uri).connect()
    try:
        return read_catalogue(conn)
    finally:
        conn.close()


def _upstream_table(catalogue: dict, changefeed_id: str, schema: str, name: str):
    info = catalogue.get((schema, name))
    if info is None:
        raise CdcflowError(f"{schema}.{name} is not a table of the upstream", changefeed=changefeed_id,
                           code=TABLE_COPY_REFUSED, hint="check the name (schema.table, as the upstream spells it)")
    if info.sequence:
        raise CdcflowError(f"{schema}.{name} is a sequence: its state is copied only with the changefeed's "
                           "initial copy", changefeed=changefeed_id, code=TABLE_COPY_REFUSED,
                           hint="add it to the filter with `update --config`: its NEXTVAL calls replicate from then")
    return info


def _needs_key(changefeed_id: str, cfg, table: str, info) -> None:
    if info.valid_key() or cfg.force_replicate:
        return
    raise CdcflowError(f"{table} has no valid index (a primary key or a NOT NULL unique key): the changefeed "
                       "would not replicate its rows", changefeed=changefeed_id, code=TABLE_COPY_REFUSED,
                       hint="add a primary key to the table upstream, or set force-replicate = true in the config "
                            "(`update --config`, paused), then add it again")


def _cascades(spec, cfg, names: list[str]) -> None:
    """The tables joined must not have a row-changing foreign key to a table the filter leaves out."""
    from cdcflow.core.uri import parse_sink_uri, parse_source_uri  # lazy: as in _catalogue
    from cdcflow.filter import cascade_fk  # lazy: only where tables join

    source, sink = parse_source_uri(spec.source_uri), parse_sink_uri(spec.sink_uri)
    conn, down = source.connect(), sink.connect()
    try:
        cascade_fk.check_catalogue(conn, TableFilter(list(cfg.rules), cfg.case_sensitive), spec.id, down)
    except CdcflowError as e:
        raise CdcflowError(e.message, changefeed=spec.id, code=TABLE_COPY_REFUSED,
                           hint=f"add the parent tables too (--tables {','.join(names)},<parent>), or {e.hint}") \
            from None
    finally:
        conn.close()
        down.close()


def _empty_downstream(spec, names: list[str], hint_no_copy: bool = False) -> None:
    """An added table must not hold rows downstream: the copy would mix with them."""
    from cdcflow.core.uri import parse_sink_uri  # lazy: as in _catalogue

    down = parse_sink_uri(spec.sink_uri).connect()
    try:
        for table in names:
            schema, name = table.split(".", 1)
            with down.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                            "AND TABLE_NAME = %s", (schema, name))
                if not cur.fetchone()[0]:
                    continue
                cur.execute(f"SELECT 1 FROM {quote_ident(schema)}.{quote_ident(name)} LIMIT 1")
                if cur.fetchone():
                    raise CdcflowError(
                        f"the downstream table {table} holds rows already: a copy would mix with them",
                        changefeed=spec.id, code=TABLE_COPY_REFUSED,
                        hint=f"drop or empty {table} downstream, then " + (
                            "update again; or update with --no-copy: the tables the filter takes in then replicate "
                            "from the checkpoint on, without their existing rows" if hint_no_copy else
                            "add it again; to keep the rows it holds instead, add it to the filter with "
                            "`update --config --no-copy` (paused): its changes replicate from the checkpoint on"))
    finally:
        down.close()


# each kind of copy (store.table_copies ADD / RESYNC) and the command that checks and records it
BY_KIND = {table_copies.ADD: add_tables, table_copies.RESYNC: resync_tables}
