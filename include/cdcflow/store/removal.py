"""Removing a changefeed: everything it owns goes in one call, so no caller can forget a part."""

from __future__ import annotations

from cdcflow.config.spec_store import Spec, delete_spec
from cdcflow.store import events
from cdcflow.store.engine import engine
from cdcflow.store.tables import delete_owned


def remove_changefeed(spec: Spec) -> None:
    """Its rows in every table of the metadata store (state, runs, lease, index jobs, schema
    versions, DDL replacements), its spec file and its folder in the event store."""
    # resolved first: a config or an event store URL that fails deletes nothing
    fs, folder = events.changefeed_folder(spec.config().event_store, spec.id)
    with engine().begin() as c:
        delete_owned(c, spec.id)
    delete_spec(spec.id)
    events.delete_folder(fs, folder)
