"""Several `airflow` CLI commands in one process, as the `airflow` executable runs each:

    python -m cdcflow_devtools.airflow_cli_batch '[["pools", "set", "p", "2", ""], ["variables", ...]]'

Each `airflow` process imports Airflow anew, about 5 s of CPU here, which is most of what one
command costs; airflow_bootstrap's commands run here in one.  They run in order; the first that
fails ends the batch with its exit code, after a last stderr line FAILED_PREFIX + its index.
"""

from __future__ import annotations

import json
import sys
import traceback

FAILED_PREFIX = "airflow_cli_batch: failed command "


def exit_code(e: SystemExit) -> int:
    """The process's exit status for sys.exit(e.code), as the interpreter computes it."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)  # sys.exit("message"): the interpreter prints it and exits 1
    return 1


def main(argv: list[str] | None = None) -> int:
    commands = json.loads((sys.argv[1:] if argv is None else argv)[0])
    from airflow.__main__ import main as airflow_main  # lazy: imports Airflow, configured by the caller's environment

    for index, command in enumerate(commands):
        sys.argv = ["airflow", *command]  # airflow's main parses sys.argv
        try:
            airflow_main()
            code = 0
        except SystemExit as e:
            code = exit_code(e)
        except Exception:  # what the interpreter does with it: the traceback, exit status 1
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        if code != 0:
            print(f"{FAILED_PREFIX}{index}", file=sys.stderr, flush=True)
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
