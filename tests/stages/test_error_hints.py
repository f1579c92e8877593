"""The command an error's hint names is one the CLI runs: the unexpected-failure hint's
`cdcflow --debug changefeed run -c ID` (`--debug` is the command's own option, before
`changefeed`; after it argparse refused the whole line)."""

from __future__ import annotations

import re
import shlex

from cdcflow import cli
from cdcflow.core.errors import classify


def test_the_full_trace_hint_names_a_command_that_runs(cdcflow_home, capsys):
    err = classify(ValueError("something unexpected"), "apply", "no-such-feed")
    command = re.search(r"`(cdcflow [^`]+)`", err.hint).group(1)
    argv = shlex.split(command)[1:]
    capsys.readouterr()
    rc = cli.main(argv)
    out = capsys.readouterr()
    # the command ran: the changefeed does not exist, said in one line, with the trace --debug asks for
    assert rc == 1, out.err
    assert "Traceback" in out.err and "no-such-feed" in out.err.splitlines()[-1]
