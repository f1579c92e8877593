"""Apply airflow_settings.yaml (the Astro CLI format) to a plain local Airflow.

    python -m cdcflow_devtools.airflow_bootstrap [path/to/airflow_settings.yaml] [--dry-run]

Astro's `astro dev start` reads the file itself; a pip-installed Airflow does
not, so this runs the `airflow` CLI that sits next to this interpreter:

    connections  `airflow connections import --overwrite <file>`: the values go
                 through a private temporary file, so no password is ever on a
                 command line, and an existing connection is replaced
    pools        `airflow pools set NAME SLOTS DESCRIPTION` (create or update)
    variables    `airflow variables set KEY VALUE` (create or update)

so running it twice leaves Airflow as running it once. cdcflow never imports
airflow; this only talks to its CLI (the commands in one process: airflow_cli_batch).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from cdcflow.core.errors import ConfigError
from cdcflow_devtools.airflow_cli_batch import FAILED_PREFIX
from cdcflow_devtools.checkout import PROJECT

SETTINGS_FILE = "airflow_settings.yaml"


def default_path() -> Path:
    """The file in the current folder (an Astro project), else the one of this project."""
    here = Path.cwd() / SETTINGS_FILE
    return here if here.exists() else PROJECT / SETTINGS_FILE

# Astro's connection keys -> the keys of Airflow's connection import file.
_CONN_FIELDS = {
    "conn_type": "conn_type",
    "conn_host": "host",
    "conn_schema": "schema",
    "conn_login": "login",
    "conn_password": "password",
    "conn_port": "port",
    "conn_extra": "extra",
    "conn_description": "description",
}


def airflow_cli() -> str:
    return str(Path(sys.executable).parent / "airflow")


def load_settings(path: str | os.PathLike) -> dict:
    """The `airflow:` section, with entries the Astro template leaves blank dropped."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist", hint="give the path of airflow_settings.yaml") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(e).split())}") from None
    section = data.get("airflow") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise ConfigError(f"{path} has no `airflow:` mapping", hint="use the Astro CLI's airflow_settings.yaml format")
    settings = {}
    for kind, name_key in (("connections", "conn_id"), ("pools", "pool_name"), ("variables", "variable_name")):
        entries = section.get(kind) or []
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ConfigError(f"{path}: airflow.{kind} must be a list of mappings")
        settings[kind] = [e for e in entries if e.get(name_key)]
    return settings


def connection_record(entry: dict) -> dict | str:
    """One entry of Airflow's connection import file: a URI, or the fields that are set."""
    conn_id = entry["conn_id"]
    if entry.get("conn_uri"):
        return str(entry["conn_uri"])
    if not entry.get("conn_type"):
        raise ConfigError(f"connection {conn_id}: conn_type (or conn_uri) is required")
    record = {}
    for astro_key, airflow_key in _CONN_FIELDS.items():
        value = entry.get(astro_key)
        if value is None or value == "":
            continue
        if airflow_key == "extra" and not isinstance(value, str):
            value = json.dumps(value)
        if airflow_key == "port":
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ConfigError(f"connection {conn_id}: conn_port {value!r} is not a number") from None
        record[airflow_key] = value
    return record


def pool_command(entry: dict, cli: str) -> list[str]:
    name = entry["pool_name"]
    slots = entry.get("pool_slot")
    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 0:
        raise ConfigError(f"pool {name}: pool_slot must be a whole number of slots, not {slots!r}")
    return [cli, "pools", "set", str(name), str(slots), str(entry.get("pool_description") or "")]


def variable_command(entry: dict, cli: str) -> list[str]:
    value = entry.get("variable_value")
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    return [cli, "variables", "set", str(entry["variable_name"]), text]


@contextmanager
def _connections_file(settings: dict):
    records = {str(e["conn_id"]): connection_record(e) for e in settings["connections"]}
    fd, name = tempfile.mkstemp(prefix="cdcflow-connections-", suffix=".json")  # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(records, f)
        yield name
    finally:
        os.unlink(name)


def plan(settings: dict, cli: str, connections_file: str | None) -> list[list[str]]:
    commands = []
    if settings["connections"] and connections_file:
        commands.append([cli, "connections", "import", "--overwrite", connections_file])
    commands += [pool_command(e, cli) for e in settings["pools"]]
    commands += [variable_command(e, cli) for e in settings["variables"]]
    return commands


def apply(settings: dict, *, cli: str | None = None, dry_run: bool = False, out=sys.stdout) -> None:
    cli = cli or airflow_cli()
    plan(settings, cli, None)  # pools and variables are checked before anything changes,
    with _connections_file(settings) as conn_file:  # and connections here
        commands = plan(settings, cli, conn_file)
        for command in commands:
            print("$ " + shlex.join(command), file=out, flush=True)
        if dry_run or not commands:
            return
        # the commands as `airflow` runs them, in one process of this interpreter (whose `airflow`
        # is `cli`): an `airflow` process each imported Airflow three times over
        done = subprocess.run([sys.executable, "-m", "cdcflow_devtools.airflow_cli_batch",
                               json.dumps([command[1:] for command in commands])], capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).splitlines()
            failed = next((int(line.removeprefix(FAILED_PREFIX)) for line in reversed(said)
                           if line.startswith(FAILED_PREFIX)), 0)
            detail = " ".join(" ".join(line for line in said if not line.startswith(FAILED_PREFIX)).split())[-500:]
            raise ConfigError(
                f"`{' '.join(commands[failed][1:4])}` failed (exit {done.returncode}): {detail}",
                hint="is AIRFLOW_HOME the Airflow you mean, and has `airflow db migrate` run?",
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cdcflow_devtools.airflow_bootstrap",
        description="Apply airflow_settings.yaml (connections, pools, variables) to the local Airflow.",
    )
    parser.add_argument("path", nargs="?", help=f"default: ./{SETTINGS_FILE}, else {PROJECT / SETTINGS_FILE}")
    parser.add_argument("--dry-run", action="store_true", help="print the airflow commands, run none")
    args = parser.parse_args(argv)
    try:
        apply(load_settings(args.path or default_path()), dry_run=args.dry_run)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
