"""The entry point of the spark-submit job (jobs/stage.py <stage> ...) that runs one Spark stage.

The job parses its arguments, builds the Spark session with the changefeed's settings
(`[cdcflow] spark-master`, `shuffle-partitions`) and runs the stage.
Its exit code and last line are what Airflow shows, so they are kept plain:

    0  the stage ran; stdout ends with one JSON line, the stage's result
    2  a CdcflowError (the user can act on it): its one-line message on stderr
    1  anything else (a bug): a traceback, then one line naming changefeed and stage

The stage functions have already recorded the error in the metadata store
when they raise, so there is nothing to record here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

from cdcflow.core.errors import CdcflowError
from cdcflow.core.stage_names import SPARK_STAGES

EXIT_OK = 0
EXIT_BUG = 1
EXIT_USER_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobs/stage.py", description="Run one Spark stage of a changefeed cycle.")
    parser.add_argument("stage", choices=SPARK_STAGES, help="the stage to run")
    parser.add_argument("--changefeed-id", required=True, help="the changefeed to run")
    parser.add_argument("--run-id", required=True, help="the cycle id that the prepare task returned")
    parser.add_argument("--debug", action="store_true", help="print tracebacks for every error")
    return parser


def _launched_by_spark_submit() -> bool:
    # spark-submit's PythonRunner starts the JVM first and hands the gateway to
    # Python through these variables; the master it was given must then win.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stage = args.stage
    if _launched_by_spark_submit():
        os.environ.setdefault("SPARK_SUBMIT_ARGS_SET_BY_LAUNCHER", "1")

    try:
        # lazy: a failure to import the stages is a failure of the stage too (exit code 1, one line)
        from cdcflow.launch.cycle_runner import run_spark_stage
        from cdcflow.stages.contracts import plain
        from cdcflow.stages.cycle import Cycle

        # the session is built with the changefeed's settings, as the CLI's cycle builds it,
        # and stopped before the last line, so Spark's shutdown logging does not follow it
        result = run_spark_stage(stage, Cycle.load(args.changefeed_id, args.run_id))
        code, line, stream = EXIT_OK, json.dumps(plain(result), default=str, sort_keys=True), sys.stdout
    except Exception as e:  # noqa: BLE001 - every failure becomes an exit code and one line
        if isinstance(e, CdcflowError):
            if args.debug:
                traceback.print_exc()
            code, line = EXIT_USER_ERROR, _one_line(str(e)) or type(e).__name__
        else:
            traceback.print_exc()  # not the user's doing: whoever fixes it needs the trace
            code = EXIT_BUG
            line = f"changefeed {args.changefeed_id}: stage {stage} failed: {type(e).__name__}: {_one_line(str(e))}"
        stream = sys.stderr
    # last, after Spark's own shutdown logging: Airflow shows the tail of the output
    print(line, file=stream, flush=True)
    return code

