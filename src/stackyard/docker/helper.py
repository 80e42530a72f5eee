"""The one helper-container runner: throwaway containers of `BACKUP_HELPER_IMAGE` that
read and write volume and bind-folder data on the engine's side, so paths the service
itself cannot see are still reached.

A helper is created with its mounts (and, to be run, a command), used, and always
removed, also when the caller fails or is interrupted. Data goes through the engine's
archive API on a created (not started) helper: out as a tar stream (numeric owners,
modes, whole-second times, symlinks and hardlinks kept), in from a tar or gzip stream
(directory times set last). Short commands (measure, wipe, move) run to their end with a
time limit. Helpers carry the label `stackyard.helper`, so that a crash's leftovers are
found and removed (`sweep`). A helper that must outlive this process (the self-update's,
which replaces it) is started detached and removed by the engine when it ends
(`start_detached`). The SDK's errors are classified here.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, explain, unreachable
from stackyard.docker.frames import split
from stackyard.docker.images import pull
from stackyard.errors import Invalid, NotFound, Unavailable

log = logging.getLogger(__name__)

#: Whether an image (by id) has GNU tar.
_GNU_TAR: dict[str, bool] = {}

HELPER_LABEL = "stackyard.helper"
#: Bytes per chunk of a tar read out of a helper.
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class HelperMount:
    """`source`: a host path (bind) or a volume name (volume)."""

    kind: Literal["bind", "volume"]
    source: str
    target: str
    read_only: bool = False

    def docker_mount(self) -> sdk.Mount:
        return sdk.Mount(self.target, self.source, type=self.kind, read_only=self.read_only)


@dataclass(frozen=True)
class Helper:
    """A created helper (`Helpers.created`), to read from and write to."""

    id: str


@dataclass(frozen=True)
class HelperResult:
    exit_code: int
    output: str


class HelperError(Unavailable):
    """A helper could not do its work (it failed, was killed, or the engine refused)."""


class HelperFailed(HelperError):
    """The helper's command ended with a status other than 0 (`errors`: what it wrote to
    its standard error)."""

    def __init__(self, what: str, status: int, errors: str) -> None:
        super().__init__(f"{what}: the helper failed (status {status}): {errors[-500:]}")
        self.status = status
        self.errors = errors


class Helpers:
    """`owner` tells this service's helpers from those of another service on the same
    engine (an agent beside the central service, say): each sweeps only its own."""

    def __init__(self, client: Engine, image: str, owner: str = "stackyard") -> None:
        self.client = client
        self.image = image
        self.owner = owner

    def ensure_image(self) -> None:
        """The helper image, pulled once when the engine does not have it."""
        try:
            self.client.images.get(self.image)
            return
        except sdk.ImageNotFound:
            pass
        except sdk.DockerException as exc:
            raise unreachable(exc) from exc
        try:
            pull(self.client, self.image)
        except Unavailable as exc:
            raise Unavailable(
                f"The helper image (BACKUP_HELPER_IMAGE) is not on this host: {exc.detail}"
            ) from exc

    @contextlib.contextmanager
    def created(
        self, mounts: Iterable[HelperMount], command: list[str] | None = None, stdin: bool = False
    ) -> Iterator[Helper]:
        """A helper created with `mounts` (not started; with `stdin`, its standard input
        open to one attached writer); removed on leaving, always."""
        self.ensure_image()
        try:
            container = self.client.containers.create(
                self.image,
                command or ["true"],
                stdin_open=stdin,
                mounts=[m.docker_mount() for m in mounts],
                labels={HELPER_LABEL: self.owner},
                network_disabled=True,
                log_config=sdk.LogConfig(type="none"),
                user="0:0",
            )
        except sdk.NotFound as exc:
            raise NotFound(f"A volume or folder to mount is missing: {explain(exc)}") from exc
        except sdk.DockerException as exc:
            raise HelperError(f"No helper container could be made: {explain(exc)}") from exc
        try:
            yield Helper(str(container.id))
        finally:
            with contextlib.suppress(sdk.DockerException, sdk.RequestException):
                container.remove(force=True, v=False)

    def run(
        self, mounts: Iterable[HelperMount], command: list[str], timeout: int = 600
    ) -> HelperResult:
        """Run `command` in a helper to its end (at most `timeout` seconds); its output
        (read while it runs: a helper logs nothing) and exit code."""
        api = self.client.api
        with self.created(mounts, command) as helper:
            try:
                stream = api.attach(helper.id, stdout=True, stderr=True, stream=True, logs=False)
                api.start(helper.id)
                output = b"".join(stream)
                status = api.wait(helper.id, timeout=timeout)
            except sdk.DockerException as exc:
                raise HelperError(f"The helper did not finish: {explain(exc)}") from exc
            except Exception as exc:  # requests' ReadTimeout: the time limit
                raise HelperError(f"The helper did not finish within {timeout:g} s") from exc
            return HelperResult(int(status.get("StatusCode", -1)), output.decode(errors="replace"))

    def check_output(
        self, mounts: Iterable[HelperMount], command: list[str], timeout: int = 600
    ) -> str:
        """`run`, raising HelperError (with the end of the output) unless it succeeded."""
        result = self.run(mounts, command, timeout)
        if result.exit_code != 0:
            raise HelperError(
                f"The helper failed (status {result.exit_code}): {result.output.strip()[-500:]}"
            )
        return result.output

    def read_tar(self, helper: Helper, path: str) -> Generator[bytes, None, None]:
        """`path` of the helper as a tar stream, in chunks of about `CHUNK` bytes. The
        engine's response is closed when the reader stops, also early (a failure of the
        reader's own): the helper can then be removed at once."""
        api = self.client.api
        url = f"{api.base_url}/v{api.api_version}/containers/{helper.id}/archive"
        try:
            response = api.get(url, params={"path": path}, stream=True)
        except sdk.RequestException as exc:
            raise HelperError(f"Reading {path} through the helper failed: {exc}") from exc
        try:
            if response.status_code == 404:
                raise NotFound(f"{path} is missing in the helper")
            if response.status_code >= 400:
                raise HelperError(
                    f"Reading {path} through the helper failed: {response.status_code} "
                    f"{response.text[:300]}"
                )
            yield from response.iter_content(CHUNK)
        except sdk.RequestException as exc:
            raise HelperError(f"The helper's data stream broke off: {exc}") from exc
        finally:
            response.close()

    def stream_output(
        self, mounts: Iterable[HelperMount], command: list[str], what: str
    ) -> Generator[bytes, None, None]:
        """Run `command` in a helper and yield what it writes to standard output as it
        comes (its standard error kept for the error); HelperFailed when it ends with a
        status other than 0, HelperError when it breaks off.
        Stopping early removes the helper with what runs in it."""
        api = self.client.api
        with self.created(mounts, command) as helper:
            try:
                parts = api.attach(helper.id, stdout=True, stderr=True, stream=True, demux=True)
                api.start(helper.id)
            except sdk.DockerException as exc:
                raise HelperError(f"{what}: the helper did not start: {explain(exc)}") from exc
            errors = bytearray()
            try:
                for out, err in parts:
                    if err and len(errors) < 64 * 1024:
                        errors += err
                    if out:
                        yield out
                status = api.wait(helper.id, timeout=60)
            except (sdk.DockerException, sdk.RequestException) as exc:
                raise HelperError(f"{what}: the helper's output broke off: {exc}") from exc
            finally:
                with contextlib.suppress(Exception):
                    parts.close()
            _succeeded(status, what, bytes(errors))

    def feed(
        self, mounts: Iterable[HelperMount], command: list[str], chunks: Iterable[bytes], what: str
    ) -> None:
        """Run `command` in a helper with `chunks` as its standard input (closed after the
        last); HelperFailed when it ends with a status other than 0 (also when it stopped
        reading early), HelperError when the engine breaks off. A failure of `chunks`
        itself removes the helper with what runs in it."""
        api = self.client.api
        with self.created(mounts, command, stdin=True) as helper:
            try:
                attached = api.attach_socket(
                    helper.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
                )
                api.start(helper.id)
            except sdk.DockerException as exc:
                raise HelperError(f"{what}: the helper did not start: {explain(exc)}") from exc
            sock: socket.socket = getattr(attached, "_sock", attached)
            output = bytearray()
            reader = threading.Thread(target=_drain, args=(sock, output), daemon=True)
            reader.start()
            try:
                with contextlib.suppress(OSError):  # it stopped reading: its status says why
                    for chunk in chunks:
                        sock.sendall(chunk)
                    sock.shutdown(socket.SHUT_WR)
                reader.join()
                status = api.wait(helper.id, timeout=60)
            except (sdk.DockerException, sdk.RequestException) as exc:
                raise HelperError(f"{what}: the helper broke off: {exc}") from exc
            finally:
                with contextlib.suppress(OSError):
                    sock.close()
            _succeeded(
                status, what, b"".join(f.data for f in split(output) if f.stream == "stderr")
            )

    def gnu_tar(self) -> bool:
        """Whether the helper image has GNU tar (asked once per image and process)."""
        self.ensure_image()
        try:
            key = str(self.client.images.get(self.image).id)
        except sdk.DockerException as exc:
            raise unreachable(exc) from exc
        if key not in _GNU_TAR:
            try:
                result = self.run([], ["tar", "--version"], timeout=60)
                _GNU_TAR[key] = result.exit_code == 0 and "GNU tar" in result.output
            except HelperError:  # no tar at all
                _GNU_TAR[key] = False
        return _GNU_TAR[key]

    def write_tar(self, helper: Helper, path: str, chunks: Iterable[bytes]) -> None:
        """Extract a tar (plain or gzip) stream at `path` of the helper."""
        try:
            ok = self.client.api.put_archive(helper.id, path, chunks)
        except sdk.APIError as exc:
            if exc.status_code == 400:
                raise Invalid(f"The archive could not be extracted: {explain(exc)}") from exc
            raise HelperError(f"Writing through the helper failed: {explain(exc)}") from exc
        except sdk.DockerException as exc:
            raise HelperError(f"Writing through the helper failed: {explain(exc)}") from exc
        if not ok:
            raise HelperError("The engine did not accept the archive")

    def sweep(self) -> int:
        """Remove helpers left by an interrupted run of the service; how many."""
        removed = 0
        try:
            found = self.client.containers.list(
                all=True, filters={"label": f"{HELPER_LABEL}={self.owner}"}
            )
        except sdk.DockerException:
            return 0
        for container in found:
            with contextlib.suppress(sdk.DockerException):
                container.remove(force=True, v=False)
                removed += 1
        return removed


def _succeeded(status: Mapping[str, Any], what: str, errors: bytes) -> None:
    """A helper's end (the engine's answer to waiting for it): HelperFailed, with what it
    wrote to its standard error, unless its status is 0."""
    code = int(status.get("StatusCode", -1))
    if code != 0:
        raise HelperFailed(what, code, errors.decode(errors="replace").strip())


def _drain(sock: socket.socket, into: bytearray) -> None:
    """What a helper writes (both streams, framed), the first MiB of it."""
    with contextlib.suppress(OSError):
        while data := sock.recv(65536):
            if len(into) < 1 << 20:
                into += data


def start_detached(
    client: Engine,
    image: str,
    command: list[str],
    *,
    name: str,
    mounts: Iterable[HelperMount],
    environment: Mapping[str, str],
    labels: Mapping[str, str],
) -> None:
    """Start a helper of `image` that outlives this process: detached, removed by the
    engine when it ends, without the image's health check (a helper serves nothing)."""
    try:
        client.containers.run(
            image,
            command,
            name=name,
            detach=True,
            auto_remove=True,
            mounts=[m.docker_mount() for m in mounts],
            environment=dict(environment),
            labels=dict(labels),
            healthcheck={"test": ["NONE"]},
        )
    except sdk.DockerException as exc:
        raise HelperError(f"The helper {name} could not be started: {explain(exc)}") from exc
