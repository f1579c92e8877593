"""CDCFLOW_HOME: where changefeed specs, the embedded metadata store and the event store live.

Specs are small JSON files, one per changefeed, so the DAG factory can list
them at parse time without opening a database.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cdcflow.core.errors import CHANGEFEED_NOT_EXISTS, CdcflowError

DEFAULT_HOME = "~/.cdcflow"


def home() -> Path:
    path = Path(os.environ.get("CDCFLOW_HOME") or DEFAULT_HOME).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def specs_dir() -> Path:
    path = home() / "changefeeds"
    path.mkdir(parents=True, exist_ok=True)
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

    def config(self):
        from cdcflow.core.config import parse_config

        return parse_config(self.config_text or "", source=f"changefeed {self.id} config")


def _path(changefeed_id: str) -> Path:
    return specs_dir() / f"{changefeed_id}.json"


def save_spec(spec: Spec) -> None:
    tmp = _path(spec.id).with_suffix(".json.tmp")
    tmp.write_text(json.dumps(asdict(spec), indent=2, sort_keys=True))
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
