"""S3-compatible destinations (boto3): AWS, MinIO, Garage, R2, B2, Wasabi, ...

Checksums are sent and checked only where the service requires them (boto3 1.36 and
later add CRC32 headers by default, which R2, B2 and older MinIO refuse); over HTTPS,
request bodies are not SHA-256-signed either (see `client_config`). Path-style
addressing is a setting (most self-hosted services need it). Large archives go up in
parts of a size chosen for the archive (at most 10,000 parts, at least 8 MiB each), in
parallel; an object appears under its name only when complete, and a failed upload is
aborted so that no parts are left behind (and billed). boto3 is blocking: each call runs
in a worker thread, and a cancelled transfer is cancelled in s3transfer too.
botocore's errors are classified here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from s3transfer.subscribers import BaseSubscriber

from stackyard.backups.names import is_archive_name
from stackyard.destinations.base import Destination, checked_name, newest_first, probe_name
from stackyard.destinations.model import Progress, RemoteArchive, S3Settings, Secrets
from stackyard.errors import (
    Conflict,
    DestinationDenied,
    DestinationError,
    DestinationUnreachable,
    NotFound,
    StackyardError,
)
from stackyard.uncancellable import to_the_end

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from s3transfer.futures import TransferFuture

MIB = 1024 * 1024
MAX_PARTS = 10_000
MIN_PART = 8 * MIB
CONCURRENCY = 10
#: Seconds to connect, seconds a request may wait for its answer (or between two pieces
#: of it), and tries of a request: a server that stops answering fails a call within
#: about a minute, never the minutes of four one-minute waits.
CONNECT_SECONDS = 5
READ_SECONDS = 20
ATTEMPTS = 2
_DENIED = {
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "AuthorizationHeaderMalformed",
    "403",
}
_MISSING_BUCKET = {"NoSuchBucket"}
_NOT_S3 = (
    "{url} does not answer as an S3 service (HTTP {code} without an S3 error): check the "
    "endpoint URL"
)
_MISSING_KEY = {"NoSuchKey", "404", "NotFound"}

T = TypeVar("T")
_SESSION_LOCK = threading.Lock()


@functools.cache
def _session() -> boto3.session.Session:
    """One session for every client: it reads the S3 service model once (a new session
    costs each client 60-100 ms and a copy of the model in memory)."""
    return boto3.session.Session()


def client_config(endpoint_url: str, path_style: bool) -> Config:
    """The botocore settings of every client: checksum headers only where the operation
    requires them (several S3-compatible services refuse the ones boto3 adds), bodies
    unsigned over HTTPS, bounded timeouts and retries, a connection per transfer thread.

    With no checksum header botocore puts the SHA-256 of every request body in the
    signature, over HTTPS too: a second read and hash of every part before it is sent,
    which boto3's own default skips over HTTPS and which TLS makes redundant. Over
    plain HTTP that hash is the only check of the body in transit (a part damaged on
    the way is refused: the push fails rather than leave a damaged archive), so it
    stays."""
    return Config(
        s3={
            "addressing_style": "path" if path_style else "auto",
            "payload_signing_enabled": not endpoint_url.startswith("https://"),
        },
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        connect_timeout=CONNECT_SECONDS,
        read_timeout=READ_SECONDS,
        retries={"max_attempts": ATTEMPTS, "mode": "standard"},
        max_pool_connections=CONCURRENCY + 2,
    )


def part_size(size: int) -> int:
    """A part size for an archive of `size` bytes: whole MiB, at least 8 MiB, few enough
    parts for S3's limit of 10,000."""
    needed = -(-size // MAX_PARTS)
    return max(MIN_PART, -(-needed // MIB) * MIB)


class _Progress(BaseSubscriber):
    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._done = 0
        self._lock = threading.Lock()

    def on_progress(self, future: Any, bytes_transferred: int, **kwargs: Any) -> None:
        with self._lock:
            self._done += bytes_transferred
            done = self._done
        self._progress(done)


def _no_s3_error(code: str) -> bool:
    """An error code that is none (a body that is no S3 error document), or the HTTP
    status alone (an answer without a body)."""
    return not code or code.isdigit()


def _status_only(exc: BaseException | None) -> bool:
    """A ClientError without an S3 error code."""
    if not isinstance(exc, ClientError):
        return False
    return _no_s3_error(str(exc.response.get("Error", {}).get("Code", "")))


class S3Destination(Destination):
    def __init__(self, settings: S3Settings, secrets: Secrets) -> None:
        self.settings = settings
        self.secrets = secrets
        self._client: S3Client | None = None

    @property
    def client(self) -> S3Client:
        if self._client is None:
            s = self.settings
            with _SESSION_LOCK:  # a boto3 session is not safe across threads
                self._client = _session().client(
                    "s3",
                    endpoint_url=s.endpoint_url,
                    region_name=s.region or "us-east-1",
                    aws_access_key_id=s.access_key,
                    aws_secret_access_key=self.secrets.secret_key or "",
                    config=client_config(s.endpoint_url, s.path_style),
                )
        return self._client

    def _key(self, name: str) -> str:
        prefix = self.settings.prefix
        return f"{prefix}/{name}" if prefix else name

    async def _call(self, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except (BotoCoreError, ClientError) as exc:
            raise self._classified(exc) from exc

    def _classified(self, exc: BaseException) -> StackyardError:
        where = f"{self.settings.endpoint_url} (bucket {self.settings.bucket})"
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in _DENIED:
                return DestinationDenied(f"{where} refused the access key: {code}")
            if code in _MISSING_BUCKET or (code == "404" and exc.operation_name == "HeadBucket"):
                return DestinationError(f"The bucket {self.settings.bucket} does not exist")
            if _no_s3_error(code) and not exc.operation_name.startswith("Head"):
                # An answer with a body, but no S3 error in it (a web page, say): whatever
                # answers there is no S3 service. (A HEAD answer never has a body.)
                return DestinationError(_NOT_S3.format(url=self.settings.endpoint_url, code=status))
            if isinstance(status, int) and status >= 500:
                return DestinationUnreachable(f"{where} failed ({status} {code}); retry later")
            return DestinationError(f"{where} answered {code}: {exc}")
        if isinstance(exc, EndpointConnectionError | ConnectTimeoutError | ReadTimeoutError):
            return DestinationUnreachable(f"{self.settings.endpoint_url} cannot be reached: {exc}")
        if isinstance(exc, ConnectionError):
            return DestinationUnreachable(f"The connection to {where} broke: {exc}")
        return DestinationError(f"{where}: {exc}")

    async def _exists(self, key: str) -> bool:
        def head() -> bool:
            try:
                self.client.head_object(Bucket=self.settings.bucket, Key=key)
            except ClientError as exc:
                if str(exc.response.get("Error", {}).get("Code")) in _MISSING_KEY:
                    return False
                raise
            return True

        return await self._call(head)

    async def test(self) -> str:
        bucket = self.settings.bucket
        try:
            await self._call(lambda: self.client.head_bucket(Bucket=bucket))
        except DestinationError as exc:
            # A HEAD answer has no body: a 404 is a missing bucket or no S3 service at all
            # (any web server). A listing's answer says which (NoSuchBucket, or no S3 error).
            if not _status_only(exc.__cause__):
                raise
            await self._call(lambda: self.client.list_objects_v2(Bucket=bucket, MaxKeys=1))
            raise
        probe = self._key(probe_name())
        await self._call(lambda: self.client.put_object(Bucket=bucket, Key=probe, Body=b"ok\n"))
        await self._call(lambda: self.client.delete_object(Bucket=bucket, Key=probe))
        found = await self.archives()
        return (
            f"Signed in to {self.settings.endpoint_url}; the bucket {bucket} is writable and "
            f"holds {len(found)} Stackyard archives under {self.settings.prefix or '/'}"
        )

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        key = self._key(checked_name(name))
        if await self._exists(key):
            raise Conflict(f"{name} is already on the destination")
        size = path.stat().st_size
        config = TransferConfig(
            multipart_threshold=MIN_PART,
            multipart_chunksize=part_size(size),
            max_concurrency=CONCURRENCY,
        )
        await self._transfer(
            config,
            lambda manager: manager.upload(
                str(path), self.settings.bucket, key, subscribers=[_Progress(progress)]
            ),
            undo=lambda: self._undo_upload(key),
        )

    def _undo_upload(self, key: str) -> None:
        """After a failed or cancelled upload of `key`, once its requests have ended:
        abort its unfinished multipart uploads (s3transfer aborts its own, but not when
        the connection was cut at that moment), and remove the object when a request in
        flight completed it after all (a server that stalled and answered again): the key
        was free before (`push` refuses a taken one), so nothing else is removed."""
        bucket = self.settings.bucket
        with contextlib.suppress(BotoCoreError, ClientError):
            found = self.client.list_multipart_uploads(Bucket=bucket, Prefix=key)
            for upload in found.get("Uploads", []):
                if upload.get("Key") == key and "UploadId" in upload:
                    self.client.abort_multipart_upload(
                        Bucket=bucket, Key=key, UploadId=upload["UploadId"]
                    )
        with contextlib.suppress(BotoCoreError, ClientError):
            self.client.delete_object(Bucket=bucket, Key=key)

    async def _transfer(
        self,
        config: TransferConfig,
        start: Callable[[Any], TransferFuture],
        undo: Callable[[], None] | None = None,
    ) -> None:
        """Run the transfer `start` begins; when it fails or is cancelled, `undo` runs
        once its requests have ended (in the background when this call is cancelled)."""
        manager = create_transfer_manager(self.client, config)
        failed = False
        try:
            future = start(manager)
            try:
                await self._call(future.result)
            except BaseException:
                future.cancel()
                failed = True
                raise
        finally:

            def end() -> None:
                manager.shutdown()  # (waits for the requests in flight)
                if failed and undo is not None:
                    undo()

            await to_the_end(asyncio.to_thread(end))

    async def archives(self) -> list[RemoteArchive]:
        prefix = self._key("")

        def listing() -> list[RemoteArchive]:
            found = []
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.settings.bucket, Prefix=prefix
            )
            for page in pages:
                for item in page.get("Contents", []):
                    name = item["Key"][len(prefix) :]
                    if is_archive_name(name):
                        modified = item["LastModified"].astimezone(UTC)
                        found.append(RemoteArchive(name, int(item["Size"]), modified))
            return found

        return newest_first(await self._call(listing))

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        key = self._key(checked_name(name))
        if not await self._exists(key):
            raise NotFound(f"{name} is not on the destination")
        # Received chunks (256 KiB each) waiting for the disk: 16 rather than boto3's 100,
        # so a slow disk holds 4 MiB of them in memory, not 25.
        config = TransferConfig(max_concurrency=CONCURRENCY, max_io_queue=16)
        await self._transfer(
            config,
            lambda manager: manager.download(
                self.settings.bucket, key, str(target), subscribers=[_Progress(progress)]
            ),
        )

    async def delete(self, name: str) -> None:
        key = self._key(checked_name(name))
        if not await self._exists(key):
            raise NotFound(f"{name} is not on the destination")
        await self._call(lambda: self.client.delete_object(Bucket=self.settings.bucket, Key=key))
