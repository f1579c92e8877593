"""CDCFLOW_HOME: where changefeed specs, the embedded metadata store and the event store live
(the home of the running code: core.home).

Specs are small JSON files, one per changefeed, so the DAG factory can list
them at parse time without opening a database.

Everything under the home is private to its owner (folders 0700, files 0600): a spec may
hold a password, the metadata store and the event store hold replicated rows.  Opening the
home tightens what an older cdcflow left readable, and sets the process's umask so that what
is written later (SQLite's -wal/-journal, pyarrow's and Spark's Parquet) is private too.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cdcflow.core import home as running
from cdcflow.core.errors import CHANGEFEED_NOT_EXISTS, CdcflowError

DEFAULT_HOME = running.DEFAULT_HOME
PRIVATE = 0o077  # the group and other permission bits, never set under the home
_tightened: set[Path] = set()


def home() -> Path:
    path = Path(running.current().folder()).expanduser()
    private_umask()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path not in _tightened:
        tighten(path)
        _tightened.add(path)
    return path


def private_umask() -> None:
    """Files and folders this process creates from now on get no group/other permissions."""
    current = os.umask(PRIVATE)
    os.umask(current | PRIVATE)


def tighten(root: Path) -> None:
    """Take the group/other permissions off `root` and everything under it (a home made before
    cdcflow kept it private); symbolic links are left alone."""
    for folder, _dirs, files in os.walk(root):
        for p in [folder, *(os.path.join(folder, f) for f in files)]:
            try:
                st = os.lstat(p)
                if st.st_mode & PRIVATE and not stat.S_ISLNK(st.st_mode):
                    os.chmod(p, stat.S_IMODE(st.st_mode) & ~PRIVATE)
            except FileNotFoundError:
                continue  # removed meanwhile (a cycle's events being cleaned up)


def specs_dir() -> Path:
    path = home() / "changefeeds"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


@dataclass
class Spec:
    id: str
    source_uri: str
    sink_uri: str
    config_text: str = ""
    start_ts: int = 0
    target_ts: int = 0
    created_at: float = field(default_factory=time.time)
    # which server source_uri reaches (changefeed/upstream_id.py); 0 for a spec written before it was kept
    upstream_id: int = 0

    def config(self):
        return _parsed_config(self.config_text or "", f"changefeed {self.id} config")


@functools.lru_cache(maxsize=1024)
def _parsed_config(text: str, source: str):
    """A config text parsed once (ChangefeedConfig is frozen, so one object serves every caller):
    building a changefeed's DAG asks for its config several times, for every spec at every parse."""
    # lazy: the config reader and what it reads (sink parameters, the DDL types) load when a config is first read
    from cdcflow.config.parsing import parse_config

    return parse_config(text, source=source)


def _path(changefeed_id: str) -> Path:
    return specs_dir() / f"{changefeed_id}.json"


def save_spec(spec: Spec) -> None:
    tmp = _path(spec.id).with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold a password
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(asdict(spec), indent=2, sort_keys=True))
    tmp.replace(_path(spec.id))


def spec_exists(changefeed_id: str) -> bool:
    return _path(changefeed_id).exists()


def load_spec(changefeed_id: str) -> Spec:
    path = _path(changefeed_id)
    if not path.exists():
        raise CdcflowError(
            f"changefeed {changefeed_id} does not exist under {specs_dir()}",
            code=CHANGEFEED_NOT_EXISTS,
            hint="list them with `cdcflow changefeed list`, or check CDCFLOW_HOME",
        )
    return Spec(**json.loads(path.read_text()))


def list_specs() -> list[Spec]:
    specs = []
    for path in sorted(specs_dir().glob("*.json")):
        try:
            specs.append(Spec(**json.loads(path.read_text())))
        except (ValueError, TypeError):
            continue  # a half-written or foreign file is not a changefeed
    return specs


def delete_spec(changefeed_id: str) -> None:
    _path(changefeed_id).unlink(missing_ok=True)
