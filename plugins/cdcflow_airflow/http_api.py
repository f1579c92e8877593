"""An HTTP API shaped like TiCDC's OpenAPI v2, and the changefeeds page that uses it.

Mounted by the Airflow plugin under URL_PREFIX on Airflow's API server:

    GET  {URL_PREFIX}/api/v2/changefeeds[?state=normal]   {"total": n, "items": [...]}
    GET  {URL_PREFIX}/api/v2/changefeeds/{id}             TiCDC's ChangeFeedInfo, cdcflow's own under `cdcflow`
    GET  {URL_PREFIX}/api/v2/changefeeds/{id}/status      TiCDC's ChangefeedStatus
    POST {URL_PREFIX}/api/v2/changefeeds/{id}/pause       as `cdcflow changefeed pause`
    POST {URL_PREFIX}/api/v2/changefeeds/{id}/resume      {"overwrite_checkpoint_ts": TS|now|null, "dry_run": bool}
    POST {URL_PREFIX}/api/v2/changefeeds/{id}/runs        {"mode", "start_ts", "target_ts", "tables"}: a DAG run (another key is refused)
    GET  {URL_PREFIX}/ui                                  the page (HTML; it calls the API)

Every route needs Airflow's login (its JWT, as a bearer token or the UI's cookie) and the
access Airflow's auth manager gives on the changefeed's DAG: reading needs read access,
pause and resume edit access (as pausing the DAG does), a run the DAG-run access Airflow's
own trigger needs.  The list shows the changefeeds whose DAG the user may read.

The lag is computed when asked (cdcflow.changefeed.live_lag); a changefeed's runs are Airflow's
DAG runs, queued to failed, merged with cdcflow's cycle records (dag_runs).  Refusals are worded
for the page (core.wording.PAGE: its buttons and fields, not the CLI's commands); a resume with
`dry_run` runs every check and returns the checkpoint it would set, changing nothing.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, and the
# dependency types are local to create_app (Airflow is imported when the app is built).
import asyncio
from pathlib import Path
from typing import Annotated

from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse

from cdcflow.core import ts_input, tso
from cdcflow.core.errors import API_INVALID_PARAM, CHANGEFEED_NOT_EXISTS, CdcflowError
from cdcflow.core.home import Home
from cdcflow.config.spec_store import load_spec
from cdcflow.core.wording import PAGE as PAGE_WORDS
from cdcflow.launch.modes import modes_for
from cdcflow_airflow.airflow_api_guard import check_trigger
from cdcflow_airflow.dag_factory import dag_id_for, use_cdcflow_home
from cdcflow_airflow.dag_runs import utc_text

URL_PREFIX = "/cdcflow"
PAGE = Path(__file__).resolve().parent / "static" / "changefeeds.html"
LAST_RUNS = 10  # on the page
LAG_POINTS = 100  # runs in the lag plot


def _error(status: int, code: str, message: str) -> JSONResponse:
    # TiCDC's HTTPError body
    return JSONResponse(status_code=status, content={"error_msg": message, "error_code": code})


def _dag_id(changefeed_id: str) -> str:
    return dag_id_for(changefeed_id)


def _list(state: str | None, readable) -> dict:
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import states, status_view

    if state is not None and state not in states.STATES:
        raise CdcflowError(f"state {state!r} is not one of {', '.join(states.STATES)}", code=API_INVALID_PARAM)
    feeds = [(spec, feed) for spec, feed in status_view.all_feeds() if state is None or feed.state == state]
    allowed = readable({_dag_id(feed.id) for _, feed in feeds})
    feeds = [(spec, feed) for spec, feed in feeds if _dag_id(feed.id) in allowed]
    extras = status_view.extras_of_all(feeds)  # the lags read together, not one changefeed after another
    items = [{**status_view.simple(feed), "cdcflow": {**extras[feed.id], "dag_id": _dag_id(feed.id)}}
             for _, feed in feeds]
    return {"total": len(items), "items": items}


def _detail(changefeed_id: str) -> dict:
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import commands

    out = commands.query(changefeed_id, last_runs=LAST_RUNS, lag_points=LAG_POINTS)
    out["checkpoint_ts"] = out.pop("checkpoint_tso")  # OpenAPI v2's ChangeFeedInfo says checkpoint_ts
    out["cdcflow"]["dag_id"] = _dag_id(out["id"])
    out["cdcflow"]["actions"] = _actions(out["state"])
    out["cdcflow"]["oldest_start_ts"] = _oldest_start(out["id"])
    return out


def _oldest_start(changefeed_id: str) -> dict:
    """The oldest start_ts a backfill can take now (launch.oldest_start), or why it is unknown."""
    from cdcflow.launch import oldest_start  # lazy: at request time

    try:
        return oldest_start.look(changefeed_id)
    except CdcflowError as e:  # an upstream that cannot be reached: the rest of the detail still shows
        return {"ts": None, "error": str(e)}


def _actions(state: str) -> dict:
    """What the page enables: the commands the state table allows (with the refusal the others
    would get, in the page's words) and the trigger modes that do something."""
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import states

    out: dict = {"modes": modes_for(state), "refusals": {}}
    for command in states.COMMANDS:
        try:
            states.next_state(state, command, words=PAGE_WORDS)
            out[command] = True
        except CdcflowError as e:
            out[command] = False
            out["refusals"][command] = f"{e.message} — {e.hint}"
    return out


def _status(changefeed_id: str) -> dict:
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import commands

    return commands.status(changefeed_id)


def _pause(changefeed_id: str) -> dict:
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import commands

    before, after = commands.pause(changefeed_id, PAGE_WORDS)
    return {"id": changefeed_id, "state_before": before, "state": after}


def _resume(changefeed_id: str, overwrite: str | int | None, dry_run: bool) -> dict:
    """The resume, or with `dry_run` its checks alone and the checkpoint it would set (an
    overwrite's `now` resolved: the page asks about that ts, then resumes with it)."""
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow.changefeed import commands

    ts = ts_input.parse(overwrite, PAGE_WORDS.field("overwrite_checkpoint_ts"), changefeed_id, API_INVALID_PARAM,
                        PAGE_WORDS)
    # no confirm: the request is the decision (the page asked before it sent it)
    before, after, checkpoint = commands.resume(changefeed_id, ts, words=PAGE_WORDS, dry_run=dry_run)
    return {"id": changefeed_id, "state_before": before, "state": after, "checkpoint_ts": checkpoint,
            "checkpoint_time": tso.to_text(checkpoint), "dry_run": dry_run,
            "checkpoint_overwritten": ts is not None}


def _check_run_request(changefeed_id: str, conf: dict) -> dict:
    """The run's conf as the DAG's prepare task will read it, refused here if it would fail there."""
    load_spec(changefeed_id)  # a changefeed that does not exist is a 404, not a DAG run
    check_trigger(changefeed_id, conf)
    return conf


async def _call(changefeed_id: str | None, func, *args):
    """Run blocking cdcflow code off the event loop; a CdcflowError is a 4xx answer."""

    def work():
        with Home(use_cdcflow_home()).entered():
            return func(*args)

    try:
        return await asyncio.to_thread(work)
    except CdcflowError as e:
        if e.code == CHANGEFEED_NOT_EXISTS:  # the CLI's message names the server's folder; this one must not
            return _error(404, e.code, f"changefeed {changefeed_id} does not exist")
        return _error(400, e.code, str(e))


def create_app() -> FastAPI:
    # lazy: Airflow's API server modules, where the app is built (module docstring)
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.common.db.common import SessionDep
    from airflow.api_fastapi.core_api.security import GetUserDep, get_user, requires_access_dag
    from airflow.api_fastapi.logging.decorators import action_logging

    app = FastAPI(title="cdcflow changefeeds", description="TiCDC OpenAPI v2 for cdcflow, behind Airflow's login")

    def dag_access(method, entity=None):
        """Airflow's own check (requires_access_dag) on the DAG of the path's changefeed."""
        def check(request: Request, user: GetUserDep, changefeed_id: str) -> None:
            requires_access_dag(method, entity, param_dag_id=_dag_id(changefeed_id))(request, user)
        return Depends(check)

    can_read, can_edit = dag_access("GET"), dag_access("PUT")
    can_trigger = dag_access("POST", DagAccessEntity.RUN)

    @app.get("/api/v2/changefeeds")
    async def list_changefeeds(user: GetUserDep, session: SessionDep,
                               state: str | None = Query(None, description="only changefeeds in this state")):
        def readable(dag_ids: set[str]) -> set[str]:
            return get_auth_manager().filter_authorized_dag_ids(dag_ids=dag_ids, user=user, method="GET")
        out = await _call(None, _list, state, readable)
        if not isinstance(out, JSONResponse):
            await asyncio.to_thread(_with_dag_state, session, [item["cdcflow"] for item in out["items"]])
        return out

    @app.get("/api/v2/changefeeds/{changefeed_id}", dependencies=[can_read])
    async def get_changefeed(changefeed_id: str, session: SessionDep):
        out = await _call(changefeed_id, _detail, changefeed_id)
        if not isinstance(out, JSONResponse):
            await asyncio.to_thread(_with_dag_runs, session, out["cdcflow"])
        return out

    @app.get("/api/v2/changefeeds/{changefeed_id}/status", dependencies=[can_read])
    async def get_changefeed_status(changefeed_id: str):
        return await _call(changefeed_id, _status, changefeed_id)

    @app.post("/api/v2/changefeeds/{changefeed_id}/pause", dependencies=[can_edit, Depends(action_logging())])
    async def cdcflow_pause_changefeed(changefeed_id: str):
        return await _call(changefeed_id, _pause, changefeed_id)

    @app.post("/api/v2/changefeeds/{changefeed_id}/resume", dependencies=[can_edit, Depends(action_logging())])
    async def cdcflow_resume_changefeed(changefeed_id: str, session: SessionDep,
                                        body: Annotated[dict | None, Body()] = None):
        body = body or {}
        out = await _call(changefeed_id, _resume, changefeed_id, body.get("overwrite_checkpoint_ts"),
                          bool(body.get("dry_run")))
        if not isinstance(out, JSONResponse) and not out["dry_run"]:  # resumed: its runs start again
            out["dag_unpaused"] = await asyncio.to_thread(_unpause, session, _dag_id(changefeed_id))
        return out

    @app.post("/api/v2/changefeeds/{changefeed_id}/runs", dependencies=[can_trigger, Depends(action_logging())])
    async def cdcflow_trigger_changefeed_run(changefeed_id: str, request: Request, user: GetUserDep,
                                             session: SessionDep, body: Annotated[dict | None, Body()] = None):
        conf = dict(body or {})
        checked = await _call(changefeed_id, _check_run_request, changefeed_id, conf)
        if isinstance(checked, JSONResponse):
            return checked
        return await asyncio.to_thread(_trigger, app, _dag_id(changefeed_id), checked, request, user, session)

    @app.get("/ui")
    async def page(request: Request):
        try:
            await get_user(request, None, _bearer(request))
        except HTTPException:  # not logged in: Airflow's login, then back here
            return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)))
        return FileResponse(PAGE, media_type="text/html")

    return app


def _with_dag_state(session, entries: list[dict]) -> None:
    """Each entry's `dag_paused`: whether its DAG is switched off in Airflow (None: not parsed yet),
    and its `last_run_time`: its last cycle's or DAG run's start, whichever is later.  Switched off
    through Airflow's API the changefeed is paused too (airflow_api_guard); off, the DAG holds every
    run until Resume or a trigger here switches it on."""
    from airflow.models.dag import DagModel  # lazy: Airflow's ORM, at request time
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    ids = [e["dag_id"] for e in entries]
    paused = dict(session.execute(select(DagModel.dag_id, DagModel.is_paused).where(DagModel.dag_id.in_(ids))).all())
    started = dict(session.execute(select(DagRun.dag_id, func.max(DagRun.start_date))
                                   .where(DagRun.dag_id.in_(ids)).group_by(DagRun.dag_id)).all())
    for e in entries:
        e["dag_paused"] = paused.get(e["dag_id"])
        e["last_run_time"] = max(filter(None, (e.get("last_run_time"), utc_text(started.get(e["dag_id"])))),
                                 default=None)


def _with_dag_runs(session, own: dict) -> None:
    """The detail's `last_runs`: Airflow's DAG runs merged with the cycles (dag_runs)."""
    # lazy: at request time: Airflow's plugin loader imports this file in every Airflow process
    from cdcflow_airflow import dag_runs

    _with_dag_state(session, [own])
    runs = dag_runs.airflow_runs(session, own["dag_id"], LAST_RUNS)
    own["last_runs"] = dag_runs.merged(runs, own["last_runs"], LAST_RUNS)


def _bearer(request: Request):
    from fastapi.security import HTTPAuthorizationCredentials  # lazy: at request time

    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return HTTPAuthorizationCredentials(scheme=scheme, credentials=token) if token else None


def _unpause(session, dag_id: str) -> bool:
    """Switch the DAG on if a person switched it off in Airflow (the changefeed's state stays as it
    is: it is the one pause, docs/guides/airflow-pause.md); whether it was off."""
    from airflow.models.dag import DagModel  # lazy: Airflow's ORM, at request time

    dag = session.get(DagModel, dag_id)
    if dag is None or not dag.is_paused:
        return False
    dag.is_paused = False
    session.commit()
    return True


def _trigger(app: FastAPI, dag_id: str, conf: dict, request: Request, user, session) -> dict:
    """A manual DAG run through the function behind Airflow's own `POST /api/v2/dags/{id}/dagRuns`,
    so it is a run like any the UI triggers.  A DAG switched off in Airflow is switched on first
    (_unpause): Airflow 3 starts no run of a paused DAG, and the run asked for must start; what it
    does is the changefeed state's to decide."""
    from airflow.api_fastapi.common.dagbag import create_dag_bag  # lazy: Airflow's API server modules, at request time
    from airflow.api_fastapi.core_api.datamodels.dag_run import TriggerDAGRunPostBody
    from airflow.api_fastapi.core_api.routes.public.dag_run import trigger_dag_run

    if not hasattr(app.state, "dag_bag"):
        app.state.dag_bag = create_dag_bag()
    unpaused = _unpause(session, dag_id)
    run = trigger_dag_run(dag_id=dag_id, body=TriggerDAGRunPostBody(conf=conf, logical_date=None),
                          dag_bag=app.state.dag_bag, user=user, session=session, request=request)
    out = {"dag_id": dag_id, "dag_run_id": run.run_id, "state": str(getattr(run.state, "value", run.state)),
           "conf": conf, "dag_unpaused": unpaused}
    session.commit()
    return out


app = create_app()
