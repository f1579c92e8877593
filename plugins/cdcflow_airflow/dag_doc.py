"""The Docs panel of a changefeed's DAG: what it replicates and how a person operates it."""

from __future__ import annotations

from cdcflow.config.checks import BINLOG_SCHEDULE
from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow.launch.modes import modes_in_words

CHANGEFEEDS_PAGE = "/plugin/cdcflow-changefeeds"  # the plugin's page inside the Airflow UI


def _uri(parse, text: str) -> str:
    try:
        return parse(text).redacted()
    except Exception:  # noqa: BLE001 - the doc must render even for a URI the spec no longer parses
        return "(not readable: see `cdcflow changefeed query`)"


def _schedule_words(changefeed_id: str, schedule: str | None) -> str:
    if not schedule:
        return "none: runs only when triggered"
    if schedule == BINLOG_SCHEDULE:
        return (f"`{schedule}`: a run when the upstream's binlog moves past the checkpoint (the asset "
                f"`changefeed__{changefeed_id}__binlog`, watched on the triggerer)")
    return f"`{schedule}`"


def _follow_words(seconds: int) -> str:
    if not seconds:
        return ""
    return (f"\nA catch-up run follows the binlog for {seconds} s instead (`follow-seconds`): its `follow` task "
            "runs cycles back to back, each as soon as the binlog moves, each recorded as a cycle of its own, and "
            "the cycle's tasks are skipped.")


def dag_doc(spec, schedule: str | None) -> str:
    cfg = spec.config()
    changefeed_id = spec.id
    if cfg.spark_master:
        spark = f"spark-submit jobs on `{cfg.spark_master}` (connection `spark_default`)"
    else:
        server = f"`{cfg.spark_remote}`" if cfg.spark_remote else "of the connection `spark_connect_default`"
        spark = f"sessions on the Spark Connect server {server}"
    rules = ", ".join(f"`{r}`" for r in cfg.rules)
    filters = f"; {len(cfg.event_filters)} event filter(s)" if cfg.event_filters else ""
    modes = modes_in_words("- `{}`", sep="\n")
    return f"""\
### Changefeed `{changefeed_id}`

One run of this DAG is one catch-up cycle: prepare → pull → filter → barrier → apply →
wait_index → finish. A run with nothing new upstream skips the Spark tasks.{_follow_words(cfg.follow_seconds)}

| | |
|---|---|
| source | `{_uri(parse_source_uri, spec.source_uri)}` |
| sink | `{_uri(parse_sink_uri, spec.sink_uri)}` |
| filter | {rules}{filters} |
| schedule | {_schedule_words(changefeed_id, schedule)} |
| Spark | {spark} |

**State, lag now, errors, every run (Airflow's and the CLI's)**: the [Changefeeds page]({CHANGEFEEDS_PAGE}), or
`cdcflow changefeed query -c {changefeed_id}`.

**Pause / resume**: the changefeed's state is its one pause (docs/guides/airflow-pause.md in the cdcflow repository).
Pause it with `cdcflow changefeed pause -c {changefeed_id}` or the page's Pause: its scheduled runs then
do nothing and say so, and a triggered verify or snapshot still runs. Airflow's toggle on this DAG
pauses and resumes the changefeed too; while it is off Airflow starts no run of this DAG at all.

**Trigger** with a mode (`start_ts` and `target_ts`: a TSO or a UTC date-time):

{modes}

Airflow's own "Backfill" (runs for a range of dates) is not cdcflow's backfill: every run
catches up from the checkpoint whatever its date; to replay, trigger one run with `mode = backfill`.
"""
