"""docs/getting-started.md's "A changefeed of your own", run as written: its SQL (the users and
their GRANTs, on the upstream and on the downstream), its config file and its command-line
block, on the test MariaDB pair.  Only what a reader fills in is put in: the servers' hosts and
ports, the made-up passwords, and `.venv/bin/cdcflow` as this Python's `-m cdcflow.cli`.  A page
that drifts from what works (a GRANT short of a privilege, a command that fails, a step the
tables need that the page leaves out) fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_helpers import assert_consistent

from cdcflow.core.privileges import DOWNSTREAM_PRIVILEGES

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "getting-started.md"
SCHEMA = "shop"  # the page's
USERS = ("repl", "writer")
PASSWORDS = {"<source password>": "gs-source-pw", "<replica password>": "gs-replica-pw"}


def section(text: str, start: str, end: str) -> str:
    return text[text.index(start):text.index(end)]


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of `text`: (language, body)."""
    return re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)


def filled(text: str, fills: dict[str, str]) -> str:
    for placeholder, value in fills.items():
        assert placeholder in text, f"the page no longer has {placeholder!r}: fix this test's reading of it"
        text = text.replace(placeholder, value)
    return text


def statements(sql: str) -> list[str]:
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def the_page() -> dict:
    """The section's SQL for each server (its first line says which), its TOML and its shell block."""
    own = section(PAGE.read_text(), "## A changefeed of your own", "### From Airflow")
    found: dict = {"sql": {}}
    for lang, body in blocks(own):
        if lang == "sql":
            side = re.match(r"-- on the (upstream|downstream)", body)
            assert side, f"an SQL block that does not say which server it is for: {body[:80]!r}"
            found["sql"][side.group(1)] = body
        else:
            assert lang not in found, f"two {lang} blocks"
            found[lang] = body
    assert set(found) == {"sql", "toml", "sh"} and set(found["sql"]) == {"upstream", "downstream"}, found.keys()
    return found


def test_the_downstream_grant_is_the_privileges_cdcflow_declares():
    grants = [s for s in statements(the_page()["sql"]["downstream"]) if s.startswith("GRANT")]
    assert grants
    for grant in grants:
        privileges = re.match(r"GRANT (.+?) ON ", grant).group(1)
        assert tuple(p.strip() for p in privileges.split(",")) == DOWNSTREAM_PRIVILEGES, grant


def test_a_changefeed_of_your_own_as_the_page_says(mariadb_pair, tmp_path):
    up, down = mariadb_pair
    page = the_page()
    for server in (up, down):
        server.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", *(f"DROP USER IF EXISTS '{u}'@'%'" for u in USERS))
    # the reader's upstream: a schema with rows, before any changefeed
    up.execute(f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)",
               f"CREATE TABLE {SCHEMA}.orders (id BIGINT PRIMARY KEY AUTO_INCREMENT, customer_id INT NOT NULL, "
               f"total DECIMAL(10,2), KEY (customer_id), FOREIGN KEY (customer_id) REFERENCES {SCHEMA}.customers (id))",
               f"INSERT INTO {SCHEMA}.customers VALUES (1, 'Ada'), (2, 'Grace')",
               f"INSERT INTO {SCHEMA}.orders (customer_id, total) VALUES (1, 9.50), (2, 12.00), (1, 3.25)")
    try:
        source, replica = ({k: v} for k, v in PASSWORDS.items())
        up.execute(*statements(filled(page["sql"]["upstream"], source)))
        down.execute(*statements(filled(page["sql"]["downstream"], replica)))
        (tmp_path / "shop.toml").write_text(page["toml"])
        script = filled(page["sh"], {**PASSWORDS, "db1.internal:3306": f"127.0.0.1:{up.port}",
                                     "replica.internal:3306": f"127.0.0.1:{down.port}",
                                     ".venv/bin/cdcflow": f"{sys.executable} -m cdcflow.cli"})
        env = {**os.environ, "CDCFLOW_HOME": str(tmp_path / "cdcflow-home")}
        done = subprocess.run(["bash", "-ec", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert '"state": "normal"' in done.stdout, done.stdout[-3000:]
        assert_consistent(up, down, [SCHEMA])

        # and the changefeed goes on: the page's `run` again, after the upstream wrote more
        up.execute(f"INSERT INTO {SCHEMA}.customers VALUES (3, 'Edsger')",
                   f"INSERT INTO {SCHEMA}.orders (customer_id, total) VALUES (3, 1.00)",
                   f"UPDATE {SCHEMA}.orders SET total = 10.00 WHERE id = 1", f"DELETE FROM {SCHEMA}.orders WHERE id = 2")
        again = "\n".join(line for line in script.splitlines() if line.startswith("export ") or " run -c " in line)
        done = subprocess.run(["bash", "-ec", again], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert_consistent(up, down, [SCHEMA])
    finally:
        for server in (up, down):
            server.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", *(f"DROP USER IF EXISTS '{u}'@'%'" for u in USERS))
