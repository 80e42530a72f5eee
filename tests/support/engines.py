"""Extra Docker engines on this machine, each its own "host" (for agents and the fleet).

Register from ``tests/conftest.py`` with ``pytest_plugins = [..., "tests.support.engines"]``.

``docker_engines(n)`` starts ``n`` independent ``dockerd`` processes beside the main one
(see shared/MACHINE.md, "More than one Docker host on one machine"): each with its own
data root, exec root, pid file, socket and bridge (never ``--bridge=none``: that deletes
the shared ``docker0``), its own address pool for the networks compose creates, and the
test images loaded. Each is an :class:`Engine` with ``docker_host`` (``unix://...``), a
docker SDK ``client`` and its own ``stacks_dir``. At the end of the test every engine is
stopped (its containers removed, SIGTERM, then SIGKILL if it hangs), whatever it left
mounted is unmounted, and its bridge and folders are removed. Engines that a killed test
session left behind are swept when the fixture is next used.

    def test_two_hosts(docker_engines):
        a, b = docker_engines(2)
        a.compose(folder, "up", "-d")          # DOCKER_HOST=unix://... docker compose
        a.client.containers.list()
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker
import pytest
import requests
from docker.errors import DockerException

#: Loaded into every extra engine unless the test asks for others.
DEFAULT_IMAGES = ("stackyard-test/busybox:1", "stackyard-test/helper:1")
#: Short: a unix socket path is limited to 108 bytes (containerd's sockets live under
#: the exec root too).
ROOT_PREFIX = "sy-eng-"
ROOT_PARENT = Path("/tmp")
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


def _run(*command: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, **kwargs)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return done


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _mounts_under(root: Path) -> list[str]:
    """Mount points at or below root, deepest first."""
    points = []
    with open("/proc/self/mountinfo") as info:
        for line in info:
            point = line.split()[4].encode().decode("unicode_escape")
            if point == str(root) or point.startswith(f"{root}/"):
                points.append(point)
    return sorted(set(points), key=lambda p: p.count("/"), reverse=True)


def _unmount_all(root: Path) -> None:
    for _ in range(3):
        points = _mounts_under(root)
        if not points:
            return
        for point in points:
            if _run("umount", point, check=False).returncode != 0:
                _run("umount", "-l", point, check=False)
    leftover = _mounts_under(root)
    if leftover:
        raise RuntimeError(f"still mounted after the engine stopped: {leftover}")


def _addresses() -> list[tuple[str, str]]:
    """(interface, IPv4 address) of this machine."""
    done = _run("ip", "-o", "-4", "addr", "show", check=False)
    pairs = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if "inet" in parts:
            pairs.append((parts[1], parts[parts.index("inet") + 1]))
    return pairs


def _links_with_prefix(prefix: str) -> list[str]:
    """The network bridges (br-...) with an address in `prefix` (e.g. "10.201.")."""
    return [
        link
        for link, address in _addresses()
        if link.startswith("br-") and address.startswith(prefix)
    ]


def _used_prefixes() -> set[str]:
    """The `10.X.` prefixes some interface address of this machine already uses."""
    return {
        ".".join(address.split(".")[:2]) + "."
        for _, address in _addresses()
        if address.startswith("10.")
    }


@dataclass
class Engine:
    """One extra engine: a separate Docker host on this machine."""

    name: str
    root: Path
    bridge: str
    prefix: str  # its address range, e.g. "10.201.": the bridge 10.201.0.1/24, networks
    # from 10.201.128.0/17
    process: subprocess.Popen
    client: docker.DockerClient | None = None
    stopped: bool = field(default=False)

    @property
    def socket(self) -> Path:
        return self.root / "d.sock"

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"

    @property
    def stacks_dir(self) -> Path:
        return self.root / "stacks"

    @property
    def log_path(self) -> Path:
        return self.root / "dockerd.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment, pointed at this engine."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
        env["DOCKER_HOST"] = self.docker_host
        env.update(extra)
        return env

    def docker(self, *args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
        """`docker ARGS` against this engine; fails the test when it fails."""
        done = subprocess.run(
            ["docker", *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,
        )
        assert done.returncode == 0, f"docker {' '.join(args)} on {self.name}: {done.stderr}"
        return done

    def compose(self, folder: Path, *args: str, timeout: float = 120):
        """`docker compose ARGS` in folder, against this engine."""
        return self.docker("compose", *args, timeout=timeout, cwd=folder)

    def stop(self) -> None:
        """Remove its containers, stop it, unmount what it left, remove its bridge and
        folders. Idempotent."""
        if self.stopped:
            return
        self.stopped = True
        errors: list[str] = []
        if self.client is not None and self.process.poll() is None:
            with contextlib.suppress(DockerException, requests.exceptions.RequestException):
                for container in self.client.containers.list(all=True):
                    with contextlib.suppress(DockerException):
                        container.remove(force=True, v=True)
                # A network's bridge (br-...) is an interface of this machine: the engine
                # removes it with the network, never when it stops.
                self.client.networks.prune()
        if self.client is not None:
            self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                errors.append(f"dockerd did not stop within {STOP_TIMEOUT}s: killed")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        _teardown(self.root, self.bridge, self.prefix, errors)
        if errors:
            raise RuntimeError(f"engine {self.name}: " + "; ".join(errors))


def _teardown(root: Path, bridge: str, prefix: str, errors: list[str]) -> None:
    # containerd (a child of dockerd, in its process group) may linger a moment.
    containerd_pid = root / "exec" / "containerd" / "containerd.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(containerd_pid.read_text().strip())
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    try:
        _unmount_all(root)
    except RuntimeError as exc:
        errors.append(str(exc))
    # Its own bridge, and those of networks it did not remove (in its address range).
    for link in [bridge, *_links_with_prefix(prefix)]:
        if Path(f"/sys/class/net/{link}").exists():
            done = _run("ip", "link", "del", link, check=False)
            if done.returncode != 0:
                errors.append(f"ip link del {link}: {done.stderr.strip()}")
    if not _mounts_under(root):
        shutil.rmtree(root, ignore_errors=True)


def sweep_stale() -> None:
    """Engines a killed session left: their dockerd is gone, their folder, mounts and
    bridge are not. Engines of running sessions are left alone."""
    for root in ROOT_PARENT.glob(f"{ROOT_PREFIX}*"):
        meta_path = root / "engine.json"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        pid = meta.get("pid")
        if pid and _alive(pid):
            continue
        with contextlib.suppress(RuntimeError, OSError):
            _teardown(root, meta["bridge"], meta["prefix"], [])


def start_engine(images: Sequence[str] = DEFAULT_IMAGES, image_tars: dict | None = None) -> Engine:
    """Start one extra engine and wait until it answers, with `images` loaded."""
    token = uuid.uuid4().hex[:8]
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir=ROOT_PARENT))
    bridge = f"sybr{token[:6]}"
    used = _used_prefixes()
    prefix = next((f"10.{x}." for x in range(200, 250) if f"10.{x}." not in used), None)
    if prefix is None:
        raise RuntimeError("no free 10.200-249.x.x range for another engine's bridge")
    subnet = f"{prefix}0.1/24"
    (root / "stacks").mkdir()
    (root / "daemon.json").write_text("{}")  # not /etc/docker/daemon.json
    _run("ip", "link", "add", bridge, "type", "bridge")
    try:
        _run("ip", "addr", "add", subnet, "dev", bridge)
        _run("ip", "link", "set", bridge, "up")
        command = [
            "dockerd",
            "--config-file", str(root / "daemon.json"),
            "--data-root", str(root / "data"),
            "--exec-root", str(root / "exec"),
            "--pidfile", str(root / "dockerd.pid"),
            "-H", f"unix://{root / 'd.sock'}",
            f"--bridge={bridge}",
            "--iptables=false",
            "--ip-masq=false",
            # The networks compose creates: a range of this engine's own.
            "--default-address-pool", f"base={prefix}128.0/17,size=24",
            # Even if it shares a containerd with another engine, never its objects.
            "--containerd-namespace", f"sy-{token}",
            "--containerd-plugins-namespace", f"sy-{token}-plugins",
        ]  # fmt: skip
        with (root / "dockerd.log").open("wb") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
    except Exception:
        _teardown(root, bridge, prefix, [])
        raise
    meta = {"pid": process.pid, "bridge": bridge, "prefix": prefix}
    (root / "engine.json").write_text(json.dumps(meta))
    engine = Engine(f"engine-{token}", root, bridge, prefix, process)
    try:
        engine.client = _wait_answering(engine)
        for image in images:
            _load(engine, image, (image_tars or {}).get(image))
    except BaseException:
        with contextlib.suppress(RuntimeError):
            engine.stop()
        raise
    return engine


def _wait_answering(engine: Engine) -> docker.DockerClient:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if engine.process.poll() is not None:
            raise RuntimeError(
                f"dockerd of {engine.name} exited with {engine.process.returncode}:\n"
                + engine.log()[-3000:]
            )
        if engine.socket.exists():
            client = docker.DockerClient(base_url=engine.docker_host, timeout=120)
            try:
                client.ping()
                return client
            except (DockerException, requests.exceptions.RequestException):
                client.close()
        time.sleep(0.2)
    raise RuntimeError(
        f"dockerd of {engine.name} did not answer within {START_TIMEOUT}s:\n" + engine.log()[-3000:]
    )


def _load(engine: Engine, image: str, tar: Path | None) -> None:
    """`docker save IMAGE | DOCKER_HOST=... docker load` (or from a saved tar)."""
    if tar is not None:
        with tar.open("rb") as source:
            engine.docker("load", "-q", stdin=source)
        return
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    try:
        engine.docker("load", "-q", stdin=save.stdout)
    finally:
        save.stdout.close()
        if save.wait(60) != 0:
            raise RuntimeError(f"docker save {image} failed (run scripts/setup.sh --test)")


@pytest.fixture(scope="session")
def _engine_image_tars(tmp_path_factory) -> dict[str, Path]:
    """Each test image saved once per session (filled on first use)."""
    return {}


@contextlib.contextmanager
def _engines(
    image_tars: dict[str, Path], tmp_path_factory
) -> Iterator[Callable[..., list[Engine]]]:
    """A starter of engines (`start(n, images)`), each stopped when the context ends (also
    on failure)."""
    sweep_stale()
    started: list[Engine] = []

    def start(n: int = 1, images: Sequence[str] = DEFAULT_IMAGES) -> list[Engine]:
        for image in images:
            if image not in image_tars:
                path = tmp_path_factory.mktemp("engine-images") / "image.tar"
                _run("docker", "save", "-o", str(path), image)
                image_tars[image] = path
        engines = []
        for _ in range(n):
            engine = start_engine(images, image_tars)
            started.append(engine)
            engines.append(engine)
        return engines

    yield start
    errors = []
    for engine in reversed(started):
        try:
            engine.stop()
        except RuntimeError as exc:
            errors.append(str(exc))
    if errors:
        pytest.fail("; ".join(errors), pytrace=False)


@pytest.fixture
def docker_engines(
    docker_client: docker.DockerClient, _engine_image_tars: dict[str, Path], tmp_path_factory
) -> Iterator[Callable[..., list[Engine]]]:
    """docker_engines(n, images=DEFAULT_IMAGES) -> n new engines, stopped at the end of the
    test: for a test that stops or breaks its engines."""
    with _engines(_engine_image_tars, tmp_path_factory) as start:
        yield start


@pytest.fixture(scope="module")
def shared_engines(
    docker_client: docker.DockerClient, _engine_image_tars: dict[str, Path], tmp_path_factory
) -> Iterator[Callable[..., list[Engine]]]:
    """shared_engines(n) -> the module's first n engines (the test images loaded), started
    by the first test that asks and stopped after the module: each test names what it makes
    on them uniquely and looks only at what it made (an engine takes seconds to start)."""
    pool: list[Engine] = []
    with _engines(_engine_image_tars, tmp_path_factory) as start:

        def shared(n: int = 1) -> list[Engine]:
            if len(pool) < n:
                pool.extend(start(n - len(pool)))
            return pool[:n]

        yield shared
