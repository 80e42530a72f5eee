"""The fleet dashboard (signed-in users) and what each host reports to it."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Annotated, cast

from fastapi import APIRouter, Depends, Request, Response
from pydantic import TypeAdapter

from stackyard.api.deps import SettingsDep, StacksDep, current_principal
from stackyard.errors import ComputeFailed, StackyardError
from stackyard.fleet.dashboard import Fleet, FleetDashboard
from stackyard.fleet.host import HostReport, host_report

log = logging.getLogger(__name__)
#: Served by every host (the central for its own, agents at /agent/fleet/host).
host = APIRouter(tags=["fleet"], dependencies=[Depends(current_principal)])
router = APIRouter(tags=["fleet"], dependencies=[Depends(current_principal)])
_PACKAGE = Path(__file__).resolve().parents[2]


def get_dashboard(request: Request) -> FleetDashboard:
    return cast(FleetDashboard, request.app.state.fleet)


@host.get("/fleet/host", operation_id="fleetHost")
def fleet_host(stacks: StacksDep, settings: SettingsDep) -> HostReport:
    """This host's stacks by state, what needs attention and its resources."""
    return host_report(stacks, settings.app_version)


def _origin(exc: BaseException) -> str:
    """`file:line` of the innermost frame of Stackyard's own code (where a library's
    error came from our call), else of the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if Path(f.filename).is_relative_to(_PACKAGE)]
    frame = (ours or frames)[-1]
    path = Path(frame.filename)
    shown = path.relative_to(_PACKAGE) if path.is_relative_to(_PACKAGE) else path
    return f"{shown}:{frame.lineno}"


#: The payload is encoded straight from its types: it was built from typed parts, and
#: validating two hundred host cards again before sending them cost more than the rest.
_FLEET = TypeAdapter(Fleet)


@router.get("/dashboard/fleet", operation_id="fleet", response_model=Fleet)
async def fleet(dashboard: Annotated[FleetDashboard, Depends(get_dashboard)]) -> Response:
    """This host and every agent: what needs attention first, headline figures, stacks
    by state and a card per host. An agent that fails or does not answer within
    `STACKYARD_AGENT_TIMEOUT` is shown offline, with why and when it was last seen."""
    try:
        return Response(_FLEET.dump_json(await dashboard.fleet()), media_type="application/json")
    except StackyardError:
        raise
    except Exception as exc:
        log.exception("The fleet payload could not be computed")
        raise ComputeFailed(
            f"The fleet payload could not be computed: {type(exc).__name__}: {exc} ({_origin(exc)})"
        ) from exc
