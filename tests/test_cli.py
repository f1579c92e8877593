"""The command line's own behaviour, apart from what the commands do: subcommand suggestions,
the safe answer of its questions, and a quiet end when its output's reader goes away."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from cdcflow import cli


@pytest.mark.parametrize("argv, told", [
    (["changefeed", "qeury", "-c", "x"], "cdcflow changefeed: unknown command 'qeury'; did you mean 'query'?"),
    (["chngefeed", "list"], "cdcflow: unknown command 'chngefeed'; did you mean 'changefeed'?"),
    (["changefeed", "pasue", "-c", "x"], "did you mean 'pause'?"),
    (["tso", "qury"], "cdcflow tso: unknown command 'qury'; did you mean 'query'?"),
])
def test_a_mistyped_subcommand_gets_the_nearest_one(argv, told, capsys):
    with pytest.raises(SystemExit) as usage:
        cli.main(argv)
    err = capsys.readouterr().err
    assert usage.value.code == 2 and told in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("Error: ")


def test_a_subcommand_like_none_lists_them_all(capsys):
    with pytest.raises(SystemExit):
        cli.main(["changefeed", "zzzzzz"])
    err = capsys.readouterr().err
    assert "did you mean" not in err and "the commands are create, query, remove, run, pause, resume" in err, err


@pytest.mark.parametrize("typed, agreed", [("\n", False), ("", False), ("n\n", False), ("no\n", False),
                                           ("yes please\n", False), ("y\n", True), ("Y\n", True),
                                           (" yes \n", True)])
def test_a_question_agrees_only_to_y(typed, agreed, monkeypatch, capsys):
    # Enter (and a closed stdin: "") is the safe answer, no: a checkpoint moved forward skips changes
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    assert cli._ask("Continue? [y/N] ") is agreed


def test_an_unreadable_stdin_declines(monkeypatch, capsys):
    class Unreadable(io.StringIO):
        def readline(self, *a):
            raise OSError("reading from stdin while output is captured")

    monkeypatch.setattr("sys.stdin", Unreadable())
    assert cli._ask("Continue? [y/N] ") is False


@pytest.mark.parametrize("argv", [["tso", "query"], ["changefeed", "list"], ["changefeed", "list", "-a"]])
def test_a_closed_pipe_ends_quietly_as_sigpipe_does(argv, cdcflow_home):
    """`cdcflow changefeed list | head -1`: the reader is gone before the command writes; no
    'Error: BrokenPipeError', no 'Exception ignored' from the flush at exit, status 128+SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "cdcflow.cli", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=dict(os.environ))
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, ""), proc.stderr


def test_a_shell_pipe_into_head_is_quiet(cdcflow_home):
    """The same through a shell: `… | head -1` prints the first line and nothing on stderr;
    the command's status is 0 or, when head left first, 141, as `yes | head -1` gives."""
    cmd = f"{sys.executable} -m cdcflow.cli tso query | head -1; echo \"status=${{PIPESTATUS[0]}}\""
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    first, status = proc.stdout.splitlines()
    assert first.isdigit() and status in ("status=0", "status=141") and proc.stderr == "", proc.stderr
