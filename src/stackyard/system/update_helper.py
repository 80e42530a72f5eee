"""The self-update helper's program: `python -m stackyard.system.update_helper`, run in
a detached container made from the service's own image (so it outlives the service
container it replaces). It pulls the service's image and recreates the service with its
own compose project, files and env files, then writes what happened where the new
process reads it (the service's data folder, mounted at the same place).

Compose gets only what it needs of this container's environment (PATH, HOME, DOCKER_*)
and the new version: the image's own variables (its `STACKS_DIR`, say) would override
the deployment's `.env`. The new release is kept only once it answers its health with
its new version (`stackyard health`, run inside its container) without exiting or
restarting; else the previous release comes back by its image id. Once the new release
is kept, its version is written into the env file that sets `STACKYARD_VERSION` (the
line replaced, the rest kept byte for byte), so that a later `docker compose up -d`
keeps it.

Only the standard library and the service's one atomic write: it starts in a moment."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from stackyard.fs.atomic import write_atomic

#: Time for the old service to answer the request that started the update.
GRACE_SECONDS = 1.0
#: How long a new release has to become healthy before it is rolled back.
HEALTH_SECONDS = 120.0
#: The variable that names the release in the deployment's compose files.
VERSION = "STACKYARD_VERSION"
_RELEASE = re.compile(r"^v?\d+\.\d+\.\d+$")
_VERSION_LINE = re.compile(rb"^(\s*(?:export\s+)?" + VERSION.encode() + rb"\s*=)[^\r\n]*", re.M)


def compose_env(version: str) -> dict[str, str]:
    """What compose is run with: this container's PATH, HOME and DOCKER_*, the version."""
    kept = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME") or k.startswith("DOCKER_")}
    return kept | {VERSION: version}


def keep_version(env_files: list[Path], version: str) -> str:
    """`version` written into the first of `env_files` that sets it (atomically; owner,
    mode and every other byte kept), or appended to the last; what was done, as a line."""
    existing = [path for path in env_files if path.is_file()]
    if not existing:
        return f"No env file: set {VERSION}={version} where you deploy, or `up -d` goes back"
    target = next((p for p in existing if _VERSION_LINE.search(p.read_bytes())), existing[-1])
    data = target.read_bytes()
    if _VERSION_LINE.search(data):
        data = _VERSION_LINE.sub(lambda m: m.group(1) + version.encode(), data, count=1)
    else:
        data += (
            b"" if not data or data.endswith(b"\n") else b"\n"
        ) + f"{VERSION}={version}\n".encode()
    st = target.stat()
    write_atomic(target, data)  # (its mode kept)
    os.chown(target, st.st_uid, st.st_gid)
    return f"{VERSION}={version} written to {target}"


def remove_old_releases(compose: list[str], service: str, kept: tuple[str, ...]) -> list[str]:
    """The service's image repository untagged of every release (`X.Y.Z`) but `kept` (the
    previous and the running one; other tags stay); an image still in use stays (no
    force). What was removed, as lines."""
    env = compose_env(kept[-1])
    asked = subprocess.run(
        [*compose, "config", "--images", service], capture_output=True, text=True, env=env
    )
    images = asked.stdout.split()
    if len(images) != 1:
        return [f"Old releases not removed: no single image of {service} ({asked.stderr})\n"]
    repository = images[0].rsplit(":", 1)[0] if ":" in images[0].rsplit("/", 1)[-1] else images[0]
    listed = subprocess.run(
        ["docker", "image", "ls", "--format", "{{.Tag}}", repository],
        capture_output=True,
        text=True,
        env=env,
    ).stdout.split()
    removed = []
    for tag in sorted(t for t in set(listed) - set(kept) if _RELEASE.match(t)):
        done = subprocess.run(
            ["docker", "image", "rm", f"{repository}:{tag}"], capture_output=True, env=env
        )
        if done.returncode == 0:
            removed.append(f"Removed the old release {repository}:{tag}\n")
    return removed


def _container(compose: list[str], service: str, version: str) -> str | None:
    found = subprocess.run(
        [*compose, "ps", "-q", service], capture_output=True, text=True, env=compose_env(version)
    ).stdout.split()
    return found[0] if found else None


def _inspect(container: str, env: dict[str, str]) -> list[str]:
    return subprocess.run(
        [
            "docker", "inspect", "-f",
            "{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}} "
            "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}",
            container,
        ],
        capture_output=True, text=True, env=env,
    ).stdout.split()  # fmt: skip


def _answers(container: str, agent: bool, env: dict[str, str]) -> tuple[str | None, str]:
    """(the version the service in `container` answers on its loopback, or None; why not)."""
    probe = ["docker", "exec", container, "stackyard", "health", *(["--agent"] if agent else [])]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, env=env, timeout=15)
    except subprocess.TimeoutExpired:
        return None, "its health did not answer within 15 s"
    if done.returncode == 0:
        return done.stdout.strip(), ""
    said = (done.stderr.strip().splitlines() or ["no answer"])[-1]
    return None, said.removeprefix("error: ")


def healthy(
    compose: list[str], service: str, seconds: float, version: str, agent: bool = False
) -> str | None:
    """Wait, at most `seconds`, for the service's container to answer its health with
    `version` (asked inside it: `stackyard health`), running, never restarted and not
    found unhealthy by its health check: None when it does, else why not."""
    env = compose_env(version)
    deadline = time.monotonic() + seconds
    state = "no container"
    while time.monotonic() < deadline:
        container = _container(compose, service, version)
        shown = [] if container is None else _inspect(container, env)
        if container is not None and len(shown) == 4:
            status, code, restarts, health = shown
            if status in ("exited", "dead"):
                return f"it exited (status {code})"
            if int(restarts) > 0:
                return f"it exited and was restarted ({restarts} times)"
            if health == "unhealthy":
                return "its health check failed"
            state = status
            if status == "running":
                answered, why = _answers(container, agent, env)
                if answered == version:
                    return None
                if answered is not None:
                    return f"it answers version {answered}, not {version}"
                state = f"running, but {why}"
        time.sleep(1)
    return f"not healthy within {seconds:g} s ({state})"


def last_logs(compose: list[str], args: argparse.Namespace) -> str:
    done = subprocess.run(
        [*compose, "logs", "--no-color", "--tail", "20", args.service],
        capture_output=True, text=True, env=compose_env(args.to_version),
    )  # fmt: skip
    return f"Its last log lines:\n{done.stdout}{done.stderr}"


def _tag_of(reference: str) -> str:
    """The tag of an image reference (`latest` when it names none)."""
    last = reference.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last and "@" not in last else "latest"


def roll_back(compose: list[str], args: argparse.Namespace, why: str, output: list[str]) -> str:
    """The previous release back, by its image id (kept on the host: its reference is
    pointed at it again), recreated with the variables it ran with and waited for; the
    update's status: "rolled_back", or "failed" when even that did not come back."""
    env = compose_env(_tag_of(args.from_reference))
    if "@" not in args.from_reference:
        subprocess.run(["docker", "tag", args.from_image, args.from_reference], env=env)
    step = ["up", "-d", "--no-deps", "--force-recreate", args.service]
    done = subprocess.run([*compose, *step], capture_output=True, text=True, env=env)
    output.append(f"Rolling back to {args.from_version}: $ docker compose {' '.join(step)}\n")
    output.append(f"{done.stdout}{done.stderr}")
    if done.returncode != 0:
        return "failed"
    back = healthy(compose, args.service, args.health_seconds, args.from_version, args.agent)
    if back is not None:
        output.append(f"The previous release is not healthy either: {back}\n")
        return "failed"
    output.append(f"Rolled back to {args.from_version}: {why}\n")
    return "rolled_back"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stackyard.system.update_helper")
    parser.add_argument("--project", required=True)
    parser.add_argument("--project-directory", required=True)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--env-file", action="append", default=[])
    parser.add_argument("--service", required=True)
    parser.add_argument("--from-version", required=True)
    parser.add_argument("--from-image", required=True, help="The running release's image id")
    parser.add_argument("--from-reference", required=True, help="...as its container names it")
    parser.add_argument("--to-version", required=True)
    parser.add_argument("--result", required=True, type=Path)
    parser.add_argument("--by", default="", help="Who started the update (for the audit log)")
    parser.add_argument("--name", default="", help="This helper's container name")
    parser.add_argument("--health-seconds", type=float, default=HEALTH_SECONDS)
    parser.add_argument("--agent", action="store_true", help="The service is an agent")
    args = parser.parse_args(argv)

    compose = [
        "docker",
        "compose",
        "-p",
        args.project,
        "--project-directory",
        args.project_directory,
    ]
    for file in args.file:
        compose += ["-f", file]
    for env_file in args.env_file:
        compose += ["--env-file", env_file]
    time.sleep(GRACE_SECONDS)
    output: list[str] = []
    status, why = "succeeded", ""
    for step in (
        ["pull", args.service],
        ["up", "-d", "--no-deps", "--force-recreate", args.service],
    ):
        done = subprocess.run(
            [*compose, *step], capture_output=True, text=True, env=compose_env(args.to_version)
        )
        output.append(f"$ docker compose {' '.join(step)}\n{done.stdout}{done.stderr}")
        if done.returncode != 0:
            status, why = "failed", f"docker compose {step[0]} failed"
            break
    if status == "succeeded" and (
        unhealthy := healthy(
            compose, args.service, args.health_seconds, args.to_version, args.agent
        )
    ):
        why = f"the new release is not healthy: {unhealthy}"
        output.append(f"The new release is not healthy: {unhealthy}\n{last_logs(compose, args)}")
        status = roll_back(compose, args, unhealthy, output)
    if status == "succeeded":
        env_files = [Path(f) for f in args.env_file] or [Path(args.project_directory) / ".env"]
        try:
            output.append(keep_version(env_files, args.to_version) + "\n")
        except OSError as exc:
            output.append(f"{VERSION}={args.to_version} could not be written: {exc}\n")
        output += remove_old_releases(compose, args.service, (args.from_version, args.to_version))
    result = {
        "status": status,
        "from_version": args.from_version,
        "to_version": args.to_version,
        "why": why,
        "by": args.by,
        "helper": args.name,
        "finished_at": datetime.now(UTC).isoformat(),
        "output": "".join(output)[-8000:],
    }
    write_atomic(args.result, json.dumps(result).encode())
    return 0 if status == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(main())
