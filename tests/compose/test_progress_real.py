"""The fold against real compose output: a pull from the loopback registry (new and cached
layers) with `--progress json`, and the plain-text fallback of older compose tools."""

import asyncio
import io
import uuid
from dataclasses import asdict

import docker.errors
import pytest

from stackyard.compose.probe import ComposeTool, compose_tool, probe_command
from stackyard.compose.progress import ProgressFold
from stackyard.compose.runner import run_compose
from stackyard.stacks.machine import Machine
from stackyard.stacks.service import StackService
from tests.support.stacks import BUSYBOX, compose_text, service

pytestmark = pytest.mark.docker
LAYER_BYTES = 24_000_000


@pytest.fixture
def fresh_image(registry, docker_client, docker_labels):
    """An image in the registry whose top layer this engine does not have (its base,
    the busybox test image, it does)."""
    repo = f"progress/{uuid.uuid4().hex[:8]}"
    dockerfile = f"FROM stackyard-test/busybox:1\nRUN head -c {LAYER_BYTES} /dev/urandom > /blob\n"
    image, _ = docker_client.images.build(
        fileobj=io.BytesIO(dockerfile.encode()), labels=docker_labels, rm=True
    )
    registry.push(image.id, repo, "1")
    docker_client.images.remove(f"{registry.host}/{repo}:1")  # its only tag: gone with it
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(image.id)
    return f"{registry.host}/{repo}:1"


def record(tool, folder, args, fold) -> tuple[int, list[str], list[dict]]:
    lines, states = [], []

    def on_line(line):
        lines.append(line)
        fold.feed_line(line)
        states.append(asdict(fold.snapshot()))

    code = asyncio.run(run_compose(tool, folder, args, on_line))
    fold.finish(code)
    states.append(asdict(fold.snapshot()))
    return code, lines, states


def test_probe_runs_once_and_finds_json_progress():
    tool = compose_tool()
    assert tool is compose_tool()
    assert tool.command == ("docker", "compose") and tool.json_progress
    v1 = probe_command(("docker-compose",))
    assert v1 is not None and v1.version.startswith("1.") and not v1.json_progress


def test_real_pull_new_and_cached_layers(fresh_image, make_stack, stacks_dir, docker_client):
    base_layers = len(docker_client.images.get(BUSYBOX).attrs["RootFS"]["Layers"])
    stack_id = make_stack("pull", compose_text(web=service(image=fresh_image)))
    folder = stacks_dir / stack_id
    fold = ProgressFold(containers_expected=False)
    code, lines, states = record(compose_tool(), folder, ["pull"], fold)
    assert code == 0, lines
    assert all(line.startswith("{") for line in lines if line.strip())  # real JSON events

    final = states[-1]
    assert final["percent"] == 100.0 and not final["errors"]
    layers = base_layers + 1
    assert (final["layers_done"], final["layers_total"]) == (layers, layers)
    phases = sorted(layer.phase for layer in fold.layers.values())
    assert phases == ["Already exists"] * base_layers + ["Pull complete"]  # cached, new
    assert LAYER_BYTES <= final["bytes_total"] <= LAYER_BYTES * 1.1  # random: incompressible
    assert final["bytes_done"] == final["bytes_total"]
    (image,) = final["images"]
    assert (image["id"], image["percent"], image["layers_total"]) == ("web", 100.0, layers)

    percents = [s["percent"] for s in states]
    assert percents == sorted(percents)  # the bar never goes back
    assert any(0 < p < 100 for p in percents)  # and moves through the download
    layer_lines = [ln for ln in final["lines"] if ln["id"] in fold.layers]
    assert len(layer_lines) == layers  # one line per layer, updated in place

    up = ProgressFold()
    code, _, states = record(compose_tool(), folder, ["up", "-d"], up)
    assert code == 0
    assert states[-1]["containers"] == [
        {"id": f"Container {stack_id}-web-1", "status": "Started", "done": True}
    ]
    assert [s["percent"] for s in states] == sorted(s["percent"] for s in states)


def test_failed_pull_is_an_error_not_progress(make_stack, stacks_dir, registry):
    stack_id = make_stack("nopull", compose_text(web=service(image=f"{registry.host}/no/such:1")))
    fold = ProgressFold(containers_expected=False)
    code, _, states = record(compose_tool(), stacks_dir / stack_id, ["pull"], fold)
    assert code != 0
    assert states[-1]["errors"] and states[-1]["percent"] != 100.0
    assert any(ln["level"] == "error" for ln in states[-1]["lines"])


@pytest.mark.parametrize(
    "tool",
    [
        pytest.param(probe_command(("docker-compose",)), id="real-v1-docker-compose"),
        pytest.param(ComposeTool(("docker", "compose"), "2.20.0", False), id="forced-failed-probe"),
    ],
)
def test_text_fallback_of_older_tools(tool, settings, make_stack, docker_client):
    stack_id = make_stack("text", compose_text(web=service()))
    stacks = StackService(Machine(settings, tool=tool))

    async def go():
        run = stacks.start(stack_id, "start")
        seen = [state async for state in stacks.follow(stack_id)]
        return run, seen

    run, seen = asyncio.run(go())
    assert run.status == "succeeded", run.fold.errors
    assert {s.progress.mode for s in seen} == {"text"}
    assert all(s.progress.percent is None for s in seen[:-1])  # indeterminate
    assert seen[-1].progress.percent == 100.0
    text = "\n".join(ln.text for ln in seen[-1].progress.lines)
    assert not text.lstrip().startswith("{") and stack_id in text
    containers = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    assert [c.status for c in containers] == ["running"]
