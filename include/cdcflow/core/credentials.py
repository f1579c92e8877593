"""Where a source or sink password comes from when the URI does not hold it.

A URI names no password and one reference instead:

* `?password-env=NAME`: the environment variable NAME;
* `?airflow-conn-id=ID`: the Airflow connection ID, its password (and its login, when it has
  one).  Outside Airflow it is read as Airflow hands connections to any process: the
  environment variable `AIRFLOW_CONN_<ID>` (URI or JSON form).  Inside an Airflow task the
  plugins hand the launcher a home (core.home.Home) whose lookup goes through the Task SDK, which also sees
  connections kept in Airflow's database or a secrets backend: the library never imports Airflow.

The spec file keeps the reference, never the password; it is resolved each time a connection
is opened, so a rotated secret is picked up by the next cycle.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from cdcflow.core import home
from cdcflow.core.errors import CREDENTIAL_UNRESOLVED, CdcflowError, ConfigError

PASSWORD_ENV = "password-env"
AIRFLOW_CONN_ID = "airflow-conn-id"
CREDENTIAL_PARAMS = (PASSWORD_ENV, AIRFLOW_CONN_ID)

def check_reference(params: Mapping[str, str], has_password: bool, kind: str) -> None:
    """At parse time: at most one reference, and none next to a password in the URI."""
    given = [p for p in CREDENTIAL_PARAMS if p in params]
    if len(given) > 1:
        raise ConfigError(f"the {kind} URI gives both {given[0]} and {given[1]}", hint="keep one of them")
    if given and has_password:
        raise ConfigError(f"the {kind} URI holds a password and {given[0]}={params[given[0]]}",
                          hint="drop the password from the URI: the reference supplies it")
    if given and not params[given[0]].strip():
        raise ConfigError(f"the {kind} URI parameter {given[0]} is empty", hint=f"write {given[0]}=NAME")


def resolve(params: Mapping[str, str], kind: str) -> tuple[str | None, str] | None:
    """(login to use instead of the URI's, or None; password) from the URI's reference; None when
    it has none.  A reference that cannot be resolved raises ErrCredentialUnresolved."""
    if PASSWORD_ENV in params:
        name = params[PASSWORD_ENV]
        if name not in os.environ:
            raise CdcflowError(
                f"the {kind} URI takes its password from the environment variable {name}, which is not set",
                code=CREDENTIAL_UNRESOLVED,
                hint=f"set {name} in the environment of the process that connects: for a changefeed Airflow runs, "
                     f"the environment Airflow's workers, triggerer and DAG processor start with (a variable exported "
                     f"later never reaches them); there an Airflow connection is better: ?airflow-conn-id=ID")
        return None, os.environ[name]
    if AIRFLOW_CONN_ID in params:
        conn_id = params[AIRFLOW_CONN_ID]
        lookup = home.current().airflow_lookup
        found = lookup(conn_id) if lookup else _airflow_from_env(conn_id)
        if found is None:
            raise CdcflowError(
                f"the {kind} URI takes its password from the Airflow connection {conn_id}, which cannot be found"
                + ("" if lookup else f" (no environment variable {airflow_env_name(conn_id)})"),
                code=CREDENTIAL_UNRESOLVED,
                hint=f"create it (`airflow connections add {conn_id} --conn-uri mysql://user:password@host:port`), "
                     f"or outside Airflow export {airflow_env_name(conn_id)}")
        login, password = found
        return login or None, password or ""
    return None


def airflow_env_name(conn_id: str) -> str:
    """The variable Airflow reads a connection from (its own naming)."""
    return f"AIRFLOW_CONN_{conn_id.upper()}"


def _airflow_from_env(conn_id: str) -> tuple[str | None, str | None] | None:
    text = os.environ.get(airflow_env_name(conn_id))
    if text is None:
        return None
    text = text.strip()
    if text.startswith("{"):  # Airflow's JSON form
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise CdcflowError(f"the environment variable {airflow_env_name(conn_id)} holds no valid JSON "
                               "connection", code=CREDENTIAL_UNRESOLVED,
                               hint='write it as {"conn_type": "mysql", "login": ..., "password": ...} or as a URI')
        return data.get("login"), data.get("password")
    parts = urlsplit(text)  # Airflow's URI form: conn-type://login:password@host:port/schema
    return (unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None)
