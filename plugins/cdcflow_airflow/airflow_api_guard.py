"""What cdcflow adds to Airflow's own REST API, which Airflow's UI calls too (an ASGI middleware
on the API server, declared by the plugin as a root middleware):

- **A changefeed DAG's pause toggle is the changefeed's pause.**  Once Airflow has switched a
  changefeed DAG off (`PATCH /api/v2/dags/{dag_id}` or the bulk `PATCH /api/v2/dags` with
  `is_paused`: the UI's toggle, its trigger form's "Unpause on trigger", the REST API), the
  changefeed is paused as the page's Pause pauses it; switched on, a paused (stopped) changefeed
  is resumed.  So a TiCDC user's `cdcflow changefeed query` shows what an Airflow user did
  (docs/guides/airflow-pause.md).  A DAG paused where no API call is seen (`airflow dags pause`
  writes Airflow's database) is only shown, on the page.
- **A trigger is checked before the run exists.**  `POST /api/v2/dags/{dag_id}/dagRuns` of a
  changefeed DAG (the trigger form, the REST API) is refused with the words the page and the
  prepare task use (launch.modes.cycle_request: unknown keys, modes, a ts in the future, one
  the upstream has purged) before Airflow creates a run; Airflow then checks the Params' schema.

Both act only for a caller Airflow lets do what the call does (its own checks run first: the
toggle is followed after Airflow answered 2xx; the trigger is checked after the caller's DAG-run
access is confirmed, so nobody else learns anything from the refusal).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

from cdcflow.core.errors import AIRFLOW_POOL_MISSING, REMEDIES, CdcflowError

log = logging.getLogger(__name__)

_DAGS = re.compile(r"/api/v2/dags(?:/(?P<dag_id>[^/]+))?$")
_RUNS = re.compile(r"/api/v2/dags/(?P<dag_id>[^/]+)/dagRuns$")


def changefeed_of(dag_id: str | None) -> str | None:
    # lazy: the plugin loader imports this module in every Airflow process; the factory imports the SDK
    from cdcflow_airflow.dag_factory import changefeed_of as of_dag

    return of_dag(dag_id)


def follow_toggle(changefeed_id: str, paused: bool) -> str | None:
    """The changefeed paused (DAG switched off) or, when stopped, resumed (switched on), as the
    page does it (changefeed.commands.follow_switch); None when its state takes no such step.
    Returns the new state."""
    from cdcflow.changefeed import commands  # lazy: loads the store, at request time
    from cdcflow.core.home import Home
    from cdcflow.core.wording import PAGE
    from cdcflow_airflow.dag_factory import use_cdcflow_home

    with Home(use_cdcflow_home()).entered():
        return commands.follow_switch(changefeed_id, paused, PAGE)


def check_trigger(changefeed_id: str, conf: dict) -> None:
    """The one check of a run before it exists, for Airflow's trigger form and REST API (this
    middleware) and the page: its conf as prepare reads it (launch.modes.cycle_request), and the
    pool its Spark tasks need (require_spark_pool)."""
    from cdcflow.core.home import Home  # lazy: at request time
    from cdcflow.config.spec_store import spec_exists
    from cdcflow.launch.modes import cycle_request
    from cdcflow_airflow.dag_factory import use_cdcflow_home

    with Home(use_cdcflow_home()).entered():
        if spec_exists(changefeed_id):  # a DAG whose spec is gone: Airflow answers, its run does nothing
            cycle_request(changefeed_id, conf)
            require_spark_pool(changefeed_id)


def require_spark_pool(changefeed_id: str) -> None:
    """Refuse a run while Airflow has no `cdcflow_spark` pool: the scheduler leaves the tasks of a
    pool that does not exist scheduled forever, and says so only in its own log."""
    from airflow.models.pool import Pool  # lazy: Airflow's ORM, on the API server at request time
    from airflow.utils.session import create_session

    from cdcflow_airflow.operators import SPARK_POOL  # lazy: the operators import the Task SDK

    with create_session() as session:
        if Pool.get_pool(SPARK_POOL, session=session) is not None:
            return
    raise CdcflowError(f"Airflow has no pool {SPARK_POOL}, which the Spark tasks of every changefeed DAG run in: "
                       "the scheduler would never start this run's pull", changefeed=changefeed_id,
                       code=AIRFLOW_POOL_MISSING, hint=REMEDIES[AIRFLOW_POOL_MISSING])


async def _body(receive) -> tuple[bytes, list]:
    """The request's body, and its messages to hand on unchanged."""
    messages, chunks = [], []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks), messages


def _replay(messages: list, receive):
    pending = list(messages)

    async def again():
        return pending.pop(0) if pending else await receive()
    return again


def _json(raw: bytes):
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None


async def _may_trigger(scope, dag_id: str) -> bool:
    """Whether Airflow's auth manager lets this request's user trigger runs of `dag_id` (the
    check Airflow's own trigger route makes)."""
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity  # lazy: API server only
    from airflow.api_fastapi.core_api.security import get_user, requires_access_dag
    from fastapi import HTTPException, Request
    from fastapi.security import HTTPAuthorizationCredentials

    request = Request(scope)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    bearer = HTTPAuthorizationCredentials(scheme=scheme, credentials=token) if token else None
    try:
        user = await get_user(request, None, bearer)
        await asyncio.to_thread(requires_access_dag("POST", DagAccessEntity.RUN, param_dag_id=dag_id), request, user)
    except HTTPException:
        return False
    return True


class AirflowApiGuard:
    """The ASGI middleware (module docstring)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST" and (m := _RUNS.search(scope["path"])):
            if (changefeed_id := changefeed_of(m["dag_id"])) is not None:
                return await self._trigger(changefeed_id, m["dag_id"], scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "PATCH" and _DAGS.search(scope["path"]):
            return await self._toggle(scope, receive, send)
        return await self.app(scope, receive, send)

    async def _trigger(self, changefeed_id: str, dag_id: str, scope, receive, send):
        raw, messages = await _body(receive)
        body = _json(raw)
        conf = body.get("conf") if isinstance(body, dict) else None
        if isinstance(conf, dict) and await _may_trigger(scope, dag_id):
            try:
                await asyncio.to_thread(check_trigger, changefeed_id, conf)
            except CdcflowError as e:
                # FastAPI's error shape: Airflow's trigger form shows `detail` under the form
                answer = json.dumps({"detail": str(e), "error_code": e.code}).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(answer)).encode())]})
                await send({"type": "http.response.body", "body": answer})
                return
        await self.app(scope, _replay(messages, receive), send)

    async def _toggle(self, scope, receive, send):
        raw, messages = await _body(receive)
        asked = _json(raw)
        if not (isinstance(asked, dict) and "is_paused" in asked):
            return await self.app(scope, _replay(messages, receive), send)
        # Airflow's answer is held until the changefeed has followed the toggle: whoever reads the
        # changefeed after the answer finds it paused (or resumed) already
        held: list = []

        async def hold(message):
            held.append(message)

        await self.app(scope, _replay(messages, receive), hold)
        try:
            await self._follow(held)
        finally:
            for message in held:
                await send(message)

    async def _follow(self, held: list) -> None:
        status = next((m["status"] for m in held if m["type"] == "http.response.start"), 0)
        answer = _json(b"".join(m.get("body", b"") for m in held if m["type"] == "http.response.body"))
        if not 200 <= status < 300 or not isinstance(answer, dict):
            return
        for dag in answer.get("dags", [answer]):  # the bulk answer lists the DAGs it changed
            changefeed_id = changefeed_of(dag.get("dag_id"))
            if changefeed_id is None or "is_paused" not in dag:
                continue
            try:
                state = await asyncio.to_thread(follow_toggle, changefeed_id, bool(dag["is_paused"]))
            except CdcflowError as e:  # the toggle stands; the page shows the DAG paused and why not the feed
                log.warning("changefeed %s: Airflow's toggle not followed: %s", changefeed_id, e)
                continue
            if state is not None:
                log.info("changefeed %s: %s in Airflow: the changefeed is now %s", changefeed_id,
                         "paused" if dag["is_paused"] else "unpaused", state)
