"""The trigger form's modes of a changefeed's DAG, as a table: what each asks of a cycle and
what it does in words, and the cycle a run's trigger parameters ask for (cycle_request: the
prepare task's and the HTTP API's one check).  A module of its own because the DAG factory
reads it while Airflow parses DAGs: it imports nothing of the cycle runner, the stages or the
changefeed's commands."""

from __future__ import annotations

import difflib
from typing import NamedTuple

from cdcflow.core import ts_input
from cdcflow.core.errors import ConfigError
from cdcflow.config.spec_store import spec_exists


class ModeRule(NamedTuple):
    """What a trigger-form mode does: its start_ts ("required", "optional", "not allowed"), whether
    it only reports, the task that runs instead of a cycle (a mode the plugin runs instead), and
    what it does in words (the trigger form's and the DAG's Docs' one text)."""

    start_ts: str
    dry_run: bool
    instead: str | None
    what: str
    tables: str | None = None  # the table copy a catch-up begins with (add-tables, resync-tables): tables required
    # a run of this mode has its cycles run by the follow task where the config's follow-seconds asks (follows())
    follows: bool = False


MODE_RULES = {
    "catch-up": ModeRule("not allowed", False, None, "from the checkpoint to what the upstream has committed",
                         follows=True),
    "backfill": ModeRule("required", False, None, "replay from start_ts"),
    "dry-run": ModeRule("optional", True, None, "plan the window and apply nothing"),
    "verify": ModeRule("not allowed", False, "verify",
                       "compare the downstream with the upstream (no cycle; the run fails if they differ)"),
    "snapshot": ModeRule("not allowed", False, "snapshot", "copy the tables of a stopped changefeed from a new "
                         "consistent point, then resume it from there (no cycle)"),
    "add-tables": ModeRule("not allowed", False, None, "take the tables named in tables into the changefeed with "
                           "their existing rows, then catch up (the cycles copy them a few chunks at a time)",
                           "add"),
    "resync-tables": ModeRule("not allowed", False, None, "copy the replicated tables named in tables again, "
                              "then catch up (the cycles copy them a few chunks at a time)", "resync"),
}
MODES = tuple(MODE_RULES)  # the trigger form's choices, default first
TRIGGER_KEYS = ("mode", "start_ts", "target_ts", "tables")  # a run's conf: every other key is refused

# The ts fields' JSON-schema pattern (Airflow refuses what does not match before a run exists):
# the shapes tso.parse reads — a TSO, `now`, or an ISO date-time, UTC unless it names a zone.
TS_PATTERN = (r"^\s*(\d{1,20}|[Nn][Oo][Ww]|\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?"
              r"(Z|[+-]\d{2}:\d{2})?)?)\s*$")


def modes_in_words(mode_style: str = "{}", sep: str = "; ") -> str:
    """Every mode and what it does, `mode_style` formatting each mode's name, `sep` between them."""
    return sep.join(f"{mode_style.format(mode)}: {rule.what}" for mode, rule in MODE_RULES.items())


def modes_for(state: str) -> list[str]:
    """The trigger modes that do something for a changefeed in `state`: a cycle's modes unless
    the state idles its cycles (states.IDLE_REASONS), a snapshot of a stopped or failed one
    (commands.SNAPSHOT_STATES), a verify whatever the state."""
    from cdcflow.changefeed import commands, states  # lazy: the DAG parse reads MODES; commands loads the store

    def does_something(mode: str) -> bool:
        instead = MODE_RULES[mode].instead
        if instead == "snapshot":
            return state in commands.SNAPSHOT_STATES
        return instead == "verify" or state not in states.IDLE_REASONS

    return [mode for mode in MODES if does_something(mode)]


def follows(params) -> bool:
    """Whether a run with these trigger parameters (checked by cycle_request) follows the binlog,
    its follow task running its cycles, where the config's follow-seconds asks: a mode whose rule
    says so, to no target_ts of the run's own (the changefeed's target-ts ends a follow as it ends
    a cycle)."""
    rule = MODE_RULES.get((params.get("mode") or "catch-up").strip())
    return bool(rule and rule.follows) and params.get("target_ts") in (None, "")


def _ts_param(changefeed_id: str, name: str, value) -> int | None:
    return ts_input.parse(value, f"trigger parameter {name}", changefeed_id)


def cycle_request(changefeed_id: str, params) -> dict:
    """The keyword arguments of stages.prepare for a run's trigger parameters: the one check of a
    run's conf, made by the API server before a run exists (the trigger form and Airflow's REST
    API through airflow_api_guard, the page's API) and by prepare (a run created elsewhere)."""
    unknown = sorted(set(params) - set(TRIGGER_KEYS))
    if unknown:
        close = [m for key in unknown for m in difflib.get_close_matches(key.replace("-", "_"), TRIGGER_KEYS, 1)]
        raise ConfigError(
            f"unknown trigger parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            + (f" (did you mean {', '.join(close)}?)" if close else ""),
            changefeed=changefeed_id, hint=f"a run takes only {', '.join(TRIGGER_KEYS)}; nothing was run")
    mode = (params.get("mode") or "catch-up").strip()
    if mode not in MODE_RULES:
        raise ConfigError(
            f"trigger parameter mode={mode!r} is not one of {', '.join(MODES)}", changefeed=changefeed_id
        )
    rule = MODE_RULES[mode]
    start_rule, dry_run, instead = rule.start_ts, rule.dry_run, rule.instead
    start_ts = _ts_param(changefeed_id, "start_ts", params.get("start_ts"))
    target_ts = _ts_param(changefeed_id, "target_ts", params.get("target_ts"))
    if start_rule == "required" and start_ts is None:
        raise ConfigError(
            "mode backfill needs start_ts", changefeed=changefeed_id, hint="give the TSO or date-time to replay from"
        )
    if start_rule == "not allowed" and start_ts is not None:
        raise ConfigError(
            "start_ts is only used by mode backfill or dry-run; a catch-up starts at the checkpoint",
            changefeed=changefeed_id,
            hint="choose mode backfill to replay from start_ts, or clear start_ts",
        )
    if start_ts is not None:  # prepare checks again: a run a trigger slipped past changes nothing either
        ts_input.not_in_future(start_ts, "start_ts", changefeed_id)
        if spec_exists(changefeed_id):  # a removed changefeed's run does nothing anyway
            _check_held(changefeed_id, start_ts)
    return {"start_ts": start_ts, "target_ts": target_ts, "dry_run": dry_run, "instead": instead,
            "copy": _tables_param(changefeed_id, mode, rule.tables, params.get("tables"))}


def _tables_param(changefeed_id: str, mode: str, kind: str | None, value) -> dict | None:
    """The table copy a mode asks for ({"kind", "tables"}), checked as the command checks it; None
    for a mode without one (a tables parameter then is refused)."""
    given = value not in (None, "", [])
    if kind is None:
        if given:
            raise ConfigError(f"tables is only used by modes add-tables and resync-tables, not {mode}",
                              changefeed=changefeed_id, hint="choose mode add-tables or resync-tables, or clear tables")
        return None
    if not given:
        raise ConfigError(f"mode {mode} needs tables", changefeed=changefeed_id,
                          hint="name the tables as schema.table, commas between them (app.b,app.c)")
    if not spec_exists(changefeed_id):  # a removed changefeed's run does nothing anyway
        return None
    from cdcflow.changefeed import table_commands  # lazy: asks the upstream, at task and request time only

    return {"kind": kind, "tables": table_commands.BY_KIND[kind](changefeed_id, value, check_only=True)["tables"]}


def _check_held(changefeed_id: str, start_ts: int) -> None:
    """A start_ts before the upstream's oldest binlog is refused (ts_input.not_before_gc)."""
    from cdcflow.launch import oldest_start  # lazy: asks the upstream, at task and request time only

    oldest_start.check_held(changefeed_id, start_ts)
