"""The fleet dashboard (signed-in users) and what each host reports to it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from stackyard.api.deps import (
    SettingsDep,
    StacksDep,
    central_services,
    current_principal,
    services,
)
from stackyard.fleet.dashboard import Fleet, FleetDashboard
from stackyard.fleet.report import HostReport, host_report

#: Served by every host (the central for its own, agents at /agent/fleet/host).
host = APIRouter(tags=["fleet"], dependencies=[Depends(current_principal)])
router = APIRouter(tags=["fleet"], dependencies=[Depends(current_principal)])


def get_dashboard(request: Request) -> FleetDashboard:
    return central_services(request).fleet


@host.get("/fleet/host", operation_id="fleetHost")
def fleet_host(request: Request, stacks: StacksDep, settings: SettingsDep) -> HostReport:
    """This host's stacks by state, what needs attention, its resources and disk."""
    return host_report(stacks, settings.app_version, services(request).disk)


@router.get("/dashboard/fleet", operation_id="fleet", response_model=Fleet)
async def fleet(dashboard: Annotated[FleetDashboard, Depends(get_dashboard)]) -> Response:
    """This host and every agent: what needs attention first, headline figures, stacks
    by state and a card per host. An agent that fails or does not answer within
    `STACKYARD_AGENT_TIMEOUT` is shown offline, with why and when it was last seen."""
    return Response(await dashboard.fleet_json(), media_type="application/json")
