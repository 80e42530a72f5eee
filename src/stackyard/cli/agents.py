"""`stackyard agents ...` (the agents this central keeps), `stackyard fleet` (the
dashboard in the terminal), and the `--agent` of `stackyard stack ...`: the same
operations as the API, on this central's database, each through the agent's client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import BaseModel

from stackyard.cli import services

if TYPE_CHECKING:
    from stackyard.agents.client import AgentClient
    from stackyard.agents.service import Agents
    from stackyard.stacks.runs import RunState

app = typer.Typer(no_args_is_help=True, help="The agents of this central (remote hosts).")

AgentArg = Annotated[str, typer.Argument(help="The agent's id or name")]
#: How often a run on an agent is looked at while it is drawn.
POLL_SECONDS = 0.3


def agent_id(service: Agents, given: str) -> int:
    from stackyard.errors import NotFound

    for view in service.all():
        if given in (str(view.id), view.name):
            return view.id
    raise NotFound(f"No agent {given!r} (see `stackyard agents list`)")


@app.command("list")
def agents_list() -> None:
    """id, name, URL, version (and whether this central can talk to it), last seen."""
    for view in services.central().agents.all():
        version = view.version or "?"
        if view.incompatibility:
            version += " (incompatible)"
        seen = view.last_seen_at.isoformat(timespec="seconds") if view.last_seen_at else "never"
        state = "" if view.enabled else "\tdisabled"
        error = f"\t{view.last_error}" if view.last_error else ""
        typer.echo(f"{view.id}\t{view.name}\t{view.url}\t{version}\t{seen}{state}{error}")


@app.command("add")
def agents_add(
    name: Annotated[str, typer.Argument(help="A name for the host")],
    url: Annotated[str, typer.Argument(help="https://HOST:8081 (or http://)")],
    token: Annotated[
        str, typer.Option("--token", envvar="STACKYARD_NEW_AGENT_TOKEN", help="The agent's token")
    ],
    fingerprint: Annotated[
        str | None,
        typer.Option("--fingerprint", help="HTTPS: the certificate fingerprint the agent printed"),
    ] = None,
) -> None:
    """Add an agent. For HTTPS, the certificate it presents is shown and pinned once you
    confirm it is the one the agent printed at its start (or give --fingerprint)."""
    from stackyard.agents.service import AgentSpec
    from stackyard.auth.audit import audited

    central = services.central()
    service = central.agents
    spec = AgentSpec(name, url, token, fingerprint)
    probe = services.run(central, service.probe(spec))
    typer.echo(probe.detail)
    if probe.version is None:
        raise typer.Exit(1)
    if url.lower().startswith("https://") and fingerprint is None:
        typer.echo(f"The agent presents a certificate with fingerprint\n  {probe.fingerprint}")
        if not typer.confirm("Is it the one the agent printed at its start?"):
            raise typer.Exit(1)
        spec = AgentSpec(name, url, token, probe.fingerprint)
    with audited(service.db, "cli", "agent.create", name):
        view = services.run(central, service.create(spec))
    typer.echo(f"Added agent {view.id} ({view.name})")


@app.command("test")
def agents_test(agent: AgentArg) -> None:
    """Reach the agent: its version and what it supports."""
    central = services.central()
    service = central.agents
    probe = services.run(central, service.test(agent_id(service, agent)))
    typer.echo(
        probe.detail + (f"; supports {', '.join(probe.capabilities)}" if probe.capabilities else "")
    )
    if not probe.ok:
        raise typer.Exit(1)


@app.command("remove")
def agents_remove(agent: AgentArg) -> None:
    """Forget the agent (and its schedules); nothing on its host changes."""
    from stackyard.auth.audit import audited

    central = services.central()
    service = central.agents
    chosen = agent_id(service, agent)
    with audited(service.db, "cli", "agent.delete", agent) as note:
        note.target = services.run(central, service.delete(chosen))
    typer.echo(f"Removed agent {note.target}")


def fleet() -> None:
    """The fleet dashboard: what needs attention, then a line per host."""
    central = services.central()
    payload = services.run(central, central.fleet.fleet())
    colours = {
        "critical": typer.colors.RED,
        "warning": typer.colors.YELLOW,
        "info": typer.colors.BLUE,
    }
    for item in payload.attention:
        where = item.host + (f"/{item.stack}" if item.stack else "")
        typer.secho(f"{item.severity.upper():8} {where}: {item.message}", fg=colours[item.severity])
    for card in payload.hosts:
        if card.report is None:
            typer.echo(f"{card.name}\t{card.status}\t{card.detail or ''}")
            continue
        stacks_by_state = ", ".join(f"{n} {s}" for s, n in card.report.stacks.items() if n)
        typer.echo(f"{card.name}\t{card.status}\t{card.version}\t{stacks_by_state or 'no stacks'}")


async def _follow(client: AgentClient, stack: str, run_id: str) -> AsyncIterator[RunState]:
    from pydantic import TypeAdapter

    from stackyard.stacks.runs import RunState

    shape = TypeAdapter(RunState)
    while True:
        state = await client.get(f"/stacks/{stack}/run", shape)
        yield state
        if state.id == run_id and state.status != "running":
            return
        await asyncio.sleep(POLL_SECONDS)


def remote_action(agent: str, stack: str, action: str) -> RunState | None:
    """Start `action` on the agent's stack and draw its progress to the end."""
    from pydantic import TypeAdapter

    from stackyard.cli.progress import draw
    from stackyard.stacks.runs import RunState

    central = services.central()
    service = central.agents

    async def go() -> RunState | None:
        client = await service.client(agent_id(service, agent))
        answer = await client.request("POST", f"/stacks/{stack}/actions/{action}")
        started = await client.read(answer, TypeAdapter(RunState))
        return await draw(_follow(client, stack, started.id))

    return services.run(central, go())


class RemoteService(BaseModel):
    name: str
    running: bool


class RemoteStack(BaseModel):
    """What `stack list` shows of an agent's stack (its answer has more)."""

    id: str
    state: str
    services: list[RemoteService]


def remote_stacks(agent: str) -> list[RemoteStack]:
    from pydantic import TypeAdapter

    central = services.central()
    service = central.agents

    async def go() -> list[RemoteStack]:
        client = await service.client(agent_id(service, agent))
        return await client.get("/stacks", TypeAdapter(list[RemoteStack]))

    return services.run(central, go())
