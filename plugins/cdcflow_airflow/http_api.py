"""A read-only HTTP API shaped like TiCDC's OpenAPI v2, and the changefeeds page that reads it.

Mounted by the Airflow plugin under URL_PREFIX on Airflow's API server:

    GET {URL_PREFIX}/api/v2/changefeeds[?state=normal]   {"total": n, "items": [...]}
    GET {URL_PREFIX}/api/v2/changefeeds/{id}             TiCDC's ChangeFeedInfo
    GET {URL_PREFIX}/api/v2/changefeeds/{id}/status      TiCDC's ChangefeedStatus
    GET {URL_PREFIX}/ui                                  the page (HTML; it fetches the list)

Reads only cdcflow's own metadata store and specs (CDCFLOW_HOME); changes nothing, so it
asks for no Airflow login, as plugin apps do unless they add their own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, JSONResponse

URL_PREFIX = "/cdcflow"
PAGE = Path(__file__).resolve().parent / "static" / "changefeeds.html"


def _error(status: int, code: str, message: str) -> JSONResponse:
    # TiCDC's HTTPError body
    return JSONResponse(status_code=status, content={"error_msg": message, "error_code": code})


def _list(state: str | None) -> dict:
    from cdcflow.changefeed import states, status_view
    from cdcflow.core.errors import API_INVALID_PARAM, CdcflowError

    if state is not None and state not in states.STATES:
        raise CdcflowError(f"state {state!r} is not one of {', '.join(states.STATES)}", code=API_INVALID_PARAM)

    items = [{**status_view.simple(feed), "cdcflow": status_view.extras(feed)}
             for feed in status_view.all_feeds() if state is None or feed.state == state]
    return {"total": len(items), "items": items}


def _detail(changefeed_id: str) -> dict:
    from cdcflow.changefeed import status_view
    from cdcflow.core.home import load_spec
    from cdcflow.store import metastore

    spec = load_spec(changefeed_id)
    out = status_view.detail(spec, metastore.get_feed(spec.id))
    del out["checkpoint_tso"]  # OpenAPI v2's ChangeFeedInfo says checkpoint_ts
    return out


def _status(changefeed_id: str) -> dict:
    from cdcflow.changefeed import status_view
    from cdcflow.core.home import load_spec
    from cdcflow.store import metastore

    return status_view.status(metastore.get_feed(load_spec(changefeed_id).id))


async def _call(func, *args):
    """Run a blocking metadata-store read off the event loop; a CdcflowError is a 4xx answer."""
    from cdcflow.core.errors import CHANGEFEED_NOT_EXISTS, CdcflowError
    from cdcflow_airflow.dag_factory import use_cdcflow_home

    def work():
        use_cdcflow_home()
        return func(*args)

    try:
        return await asyncio.to_thread(work)
    except CdcflowError as e:
        if e.code == CHANGEFEED_NOT_EXISTS:  # the CLI's message names the server's folder; this one must not
            return _error(404, e.code, f"changefeed {args[0]} does not exist")
        return _error(400, e.code, str(e))


def create_app() -> FastAPI:
    app = FastAPI(title="cdcflow changefeeds", description="TiCDC OpenAPI v2 (read-only) for cdcflow")

    @app.get("/api/v2/changefeeds")
    async def list_changefeeds(state: str | None = Query(None, description="only changefeeds in this state")):
        return await _call(_list, state)

    @app.get("/api/v2/changefeeds/{changefeed_id}")
    async def get_changefeed(changefeed_id: str):
        return await _call(_detail, changefeed_id)

    @app.get("/api/v2/changefeeds/{changefeed_id}/status")
    async def get_changefeed_status(changefeed_id: str):
        return await _call(_status, changefeed_id)

    @app.get("/ui")
    async def page():
        return FileResponse(PAGE, media_type="text/html")

    return app


app = create_app()
