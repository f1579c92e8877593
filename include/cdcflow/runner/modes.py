"""The trigger form's modes of a changefeed's DAG, as a table: what each asks of a cycle and
what it does in words, and the cycle a run's trigger parameters ask for (cycle_request: the
prepare task's and the HTTP API's one check).  A module of its own because the DAG factory
reads it while Airflow parses DAGs: it imports nothing of the runner, the stages or the
changefeed's commands."""

from __future__ import annotations

from typing import NamedTuple

from cdcflow.core import ts_input
from cdcflow.core.errors import ConfigError
from cdcflow.core.spec_store import load_spec, spec_exists
from cdcflow.core.uri import default_server_id, parse_source_uri


class ModeRule(NamedTuple):
    """What a trigger-form mode does: its start_ts ("required", "optional", "not allowed"), whether
    it only reports, the task that runs instead of a cycle (a mode the plugin runs instead), and
    what it does in words (the trigger form's and the DAG's Docs' one text)."""

    start_ts: str
    dry_run: bool
    instead: str | None
    what: str


MODE_RULES = {
    "catch-up": ModeRule("not allowed", False, None, "from the checkpoint to what the upstream has committed"),
    "backfill": ModeRule("required", False, None, "replay from start_ts"),
    "dry-run": ModeRule("optional", True, None, "plan the window and apply nothing"),
    "verify": ModeRule("not allowed", False, "verify",
                       "compare the downstream with the upstream (no cycle; the run fails if they differ)"),
    "snapshot": ModeRule("not allowed", False, "snapshot", "copy the tables of a stopped changefeed from a new "
                         "consistent point, then resume it from there (no cycle)"),
}
MODES = tuple(MODE_RULES)  # the trigger form's choices, default first


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


def _ts_param(changefeed_id: str, name: str, value) -> int | None:
    return ts_input.parse(value, f"trigger parameter {name}", changefeed_id)


def cycle_request(changefeed_id: str, params) -> dict:
    """The keyword arguments of stages.prepare for a run's trigger parameters."""
    mode = (params.get("mode") or "catch-up").strip()
    if mode not in MODE_RULES:
        raise ConfigError(
            f"trigger parameter mode={mode!r} is not one of {', '.join(MODES)}", changefeed=changefeed_id
        )
    start_rule, dry_run, instead, _ = MODE_RULES[mode]
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
    return {"start_ts": start_ts, "target_ts": target_ts, "dry_run": dry_run, "instead": instead}


def _check_held(changefeed_id: str, start_ts: int) -> None:
    """A start_ts before the upstream's oldest binlog is refused (ts_input.not_before_gc)."""
    from cdcflow.source.binlog import check_ts_held  # lazy: the binlog reader, at task and request time only

    source = parse_source_uri(load_spec(changefeed_id).source_uri)
    check_ts_held(source, source.server_id or default_server_id(changefeed_id), start_ts, "start_ts", changefeed_id)
