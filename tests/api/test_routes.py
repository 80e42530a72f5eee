"""The table of routers (stackyard.api.routes) against the routers themselves: a router is
put in when a request first asks for a path of it, found by the first segment of the path
alone, and the routers are matched in the order they were put in. So each router's
segments must be the ones it serves, and no two routers may serve one path."""

from __future__ import annotations

import itertools

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute

from stackyard.api import agent, health, routes

MODES = {"central": (health.router, routes.CENTRAL), "agent": (agent.router, routes.HOST)}


def _segments(template: str) -> list[str]:
    return template.strip("/").split("/")


def _kinds(route) -> set[str]:
    if isinstance(route, APIWebSocketRoute):
        return {"WEBSOCKET"}
    assert isinstance(route, APIRoute)
    return set(route.methods)


def _rest(segment: str) -> bool:
    """A `{name:path}`-like segment: it matches the rest of a path, slashes and all."""
    return segment.startswith("{") and ":" in segment


def _may_meet(one: str, other: str) -> bool:
    """Whether one path could match both templates (a `{...}` segment matches any one;
    a `{name:path}`-like one, anything after it)."""
    for x, y in itertools.zip_longest(_segments(one), _segments(other)):
        if x is None or y is None:
            return False
        if _rest(x) or _rest(y):
            return True
        if x != y and not x.startswith("{") and not y.startswith("{"):
            return False
    return True


@pytest.mark.parametrize("mode", MODES)
def test_each_router_serves_the_segments_the_table_names(mode):
    _, parts = MODES[mode]
    for part in parts:
        served = {_segments(route.path)[0] for route in part.router().routes}
        assert served == set(part.paths), f"{part.module}.{part.name}"


@pytest.mark.parametrize("mode", MODES)
def test_no_two_routers_serve_one_path(mode):
    early, parts = MODES[mode]
    routers = [("early", early)] + [(f"{p.module}.{p.name}", p.router()) for p in parts]
    for (one, a), (other, b) in itertools.combinations(routers, 2):
        for x, y in itertools.product(a.routes, b.routes):
            if _kinds(x) & _kinds(y) and _may_meet(x.path, y.path):
                pytest.fail(f"{one} {x.path} and {other} {y.path} may serve one path")


@pytest.mark.parametrize("mode", MODES)
def test_the_first_page_is_served_by_the_table(mode):
    _, parts = MODES[mode]
    first_page = routes.CENTRAL_FIRST_PAGE if mode == "central" else routes.AGENT_FIRST_PAGE
    assert set(first_page) <= {path for part in parts for path in part.paths}
