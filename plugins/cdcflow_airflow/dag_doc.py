"""The Docs panel of a changefeed's DAG: what it replicates and how a person operates it."""

from __future__ import annotations

from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow.runner.modes import modes_in_words

CHANGEFEEDS_PAGE = "/plugin/cdcflow-changefeeds"  # the plugin's page inside the Airflow UI


def unpause_warning(dag_id: str, page: str) -> str:
    """Airflow's trigger form ticks its unpause box on a paused DAG (fixed in its UI, no DAG argument
    or option changes it); `page` names the Changefeeds page."""
    return (f'Airflow\'s trigger form ticks "Unpause {dag_id} on trigger" on a paused DAG. Left ticked, it '
            f"unpauses the DAG: a scheduled run can start first, the run you triggered then does nothing, and "
            f"the schedule stays on. Untick it to run once, or trigger from {page}, which never unpauses.")


def _uri(parse, text: str) -> str:
    try:
        return parse(text).redacted()
    except Exception:  # noqa: BLE001 - the doc must render even for a URI the spec no longer parses
        return "(not readable: see `cdcflow changefeed query`)"


def dag_doc(spec, schedule: str | None, dag_id: str) -> str:
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
    page = f"the [Changefeeds page]({CHANGEFEEDS_PAGE})"
    unpause = f"\n**Unpause on trigger**: {unpause_warning(dag_id, page)}\n" if schedule else ""
    return f"""\
### Changefeed `{changefeed_id}`

One run of this DAG is one catch-up cycle: prepare → pull → filter → barrier → apply →
wait_index → finish. A run with nothing new upstream skips the Spark tasks.

| | |
|---|---|
| source | `{_uri(parse_source_uri, spec.source_uri)}` |
| sink | `{_uri(parse_sink_uri, spec.sink_uri)}` |
| filter | {rules}{filters} |
| schedule | {f"`{schedule}`" if schedule else "none: runs only when triggered"} |
| Spark | {spark} |

**State, lag now, errors, every run (Airflow's and the CLI's)**: the [Changefeeds page]({CHANGEFEEDS_PAGE}), or
`cdcflow changefeed query -c {changefeed_id}`.

**Pause / resume** the changefeed with `cdcflow changefeed pause -c {changefeed_id}` /
`cdcflow changefeed resume -c {changefeed_id}`: a paused changefeed's runs do nothing and say so.
Pausing this DAG in Airflow only stops its schedule from starting runs; the changefeed keeps
its state (the Changefeeds page still shows it `normal`).

**Trigger** with a mode (`start_ts` and `target_ts`: a TSO or a UTC date-time):

{modes}

Airflow's own "Backfill" (runs for a range of dates) is not cdcflow's backfill: every run
catches up from the checkpoint whatever its date; to replay, trigger one run with `mode = backfill`.
{unpause}"""
