"""S3 destinations against a real S3 endpoint on loopback (moto's server)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from hashlib import sha256

import pytest
from botocore.awsrequest import AWSResponse
from tests.destinations.contract import an_archive, run_contract, run_stalled
from tests.support.peers import silent_listener
from tests.support.processes import free_port
from tests.support.receivers import HttpReceiver
from tests.support.waiting import until

from stackyard.destinations import s3
from stackyard.destinations.model import S3Settings, Secrets
from stackyard.destinations.s3 import MIB, S3Destination, part_size
from stackyard.errors import DestinationDenied, DestinationError, DestinationUnreachable


def destination(s3, bucket: str, prefix: str = "", secret: str | None = None, url=None):
    settings = S3Settings(
        endpoint_url=url or s3.url,
        bucket=bucket,
        prefix=prefix,
        access_key=s3.access_key,
        path_style=True,
    )
    return S3Destination(settings, Secrets(secret_key=secret or s3.secret_key))


def keys(s3, bucket: str, prefix: str = "") -> list[str]:
    found = s3.client().list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return sorted(item["Key"][len(prefix) :] for item in found)


@pytest.mark.parametrize("prefix", ["", "site/backups"])
def test_the_contract(s3_server, s3_unsigned_server, tmp_path, prefix):
    s3_server = s3_unsigned_server if prefix else s3_server
    bucket = s3_server.bucket()
    full = f"{prefix}/" if prefix else ""

    def put(name: str) -> None:
        s3_server.client().put_object(Bucket=bucket, Key=full + name, Body=b"not ours")

    run_contract(
        destination(s3_server, bucket, prefix), tmp_path, lambda: keys(s3_server, bucket, full), put
    )
    if prefix:  # nothing outside the prefix
        assert all(k.startswith(full) for k in keys(s3_server, bucket))


def test_a_server_that_stalls_mid_transfer_ends_the_transfer(s3_server, tmp_path):
    bucket = s3_server.bucket()
    port = int(s3_server.url.rsplit(":", 1)[1])

    def through(relay: int) -> S3Destination:
        return destination(s3_server, bucket, url=f"http://127.0.0.1:{relay}")

    run_stalled(
        destination(s3_server, bucket), through, port, tmp_path, lambda: keys(s3_server, bucket)
    )


def test_part_sizes_fit_the_archive():
    assert part_size(1) == 8 * MIB
    assert part_size(80 * 1024 * MIB) == 9 * MIB  # 80 GiB: 9,103 parts of 9 MiB
    assert -(-(5 * 1024 * 1024 * MIB) // part_size(5 * 1024 * 1024 * MIB)) <= 10_000  # 5 TiB


def test_a_large_archive_goes_up_in_parts(s3_server, tmp_path):
    bucket = s3_server.bucket()
    local = an_archive(tmp_path, size=20 * MIB + 7)
    target = destination(s3_server, bucket)
    asyncio.run(target.push(local, local.name, lambda done: None))
    head = s3_server.client().head_object(Bucket=bucket, Key=local.name)
    assert head["ContentLength"] == local.stat().st_size
    assert head["ETag"].strip('"').endswith("-3")  # three parts of 8 MiB
    back = tmp_path / "back.tar"
    asyncio.run(target.pull(local.name, back, lambda done: None))
    assert back.read_bytes() == local.read_bytes()


def test_a_wrong_secret_a_missing_bucket_and_no_server_are_clear_errors(s3_server, tmp_path):
    bucket = s3_server.bucket()
    local = an_archive(tmp_path, size=1000)
    with pytest.raises(DestinationError, match="does not exist"):
        asyncio.run(destination(s3_server, "no-such-bucket").test())
    with pytest.raises(DestinationError, match="does not exist"):
        asyncio.run(destination(s3_server, "no-such-bucket").push(local, local.name, print))
    closed = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(DestinationUnreachable):
        asyncio.run(destination(s3_server, bucket, url=closed).test())
    assert keys(s3_server, bucket) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [local.name]


def test_an_endpoint_that_is_no_s3_service_is_said_so_not_a_missing_bucket(s3_server):
    """A web server at the endpoint (its 404 page for any path): the test says the
    endpoint does not answer as S3, where it said "The bucket does not exist"."""
    with HttpReceiver() as web:
        web.respond(".*", 404, text="<html><body>Not Found</body></html>")
        somewhere = destination(s3_server, "backups", url=web.url)
        for call in (somewhere.test, somewhere.archives):
            with pytest.raises(DestinationError) as refused:
                asyncio.run(call())
            assert refused.value.detail == (
                f"{web.url} does not answer as an S3 service (HTTP 404 without an S3 error): "
                "check the endpoint URL"
            )


def test_a_server_that_never_answers_fails_the_call_at_its_read_limit(
    s3_server, tmp_path, monkeypatch
):
    """A real listener that accepts and stays silent: the test, the list and a push each
    end at the read limit (one second here, one try) with the cause, nothing left."""
    monkeypatch.setattr(s3, "READ_SECONDS", 1)
    monkeypatch.setattr(s3, "ATTEMPTS", 1)
    local = an_archive(tmp_path, size=1000)
    with silent_listener() as where:
        silent = destination(s3_server, "bucket", url=f"http://{where}")
        for call in (silent.test, silent.archives, lambda: silent.push(local, local.name, print)):
            with pytest.raises(DestinationUnreachable, match="Read timeout"):
                asyncio.run(call())
    assert sorted(p.name for p in tmp_path.iterdir()) == [local.name]


def test_a_wrong_secret_is_denied_and_leaves_nothing(s3_server, tmp_path):
    bucket = s3_server.bucket()
    local = an_archive(tmp_path, size=1000)
    wrong = destination(s3_server, bucket, secret="wrong")
    with pytest.raises(DestinationDenied, match="refused the access key"):
        asyncio.run(wrong.push(local, local.name, print))
    with pytest.raises(DestinationDenied):
        asyncio.run(wrong.test())
    assert keys(s3_server, bucket) == []


def test_a_failed_upload_leaves_no_parts_and_no_object(s3_server, tmp_path):
    """The transfer is cancelled after its first parts went up (as when the client goes
    away): the multipart upload is aborted, no object appears."""
    bucket = s3_server.bucket()
    local = an_archive(tmp_path, size=48 * MIB)
    target = destination(s3_server, bucket)
    started = threading.Event()

    def progress(done: int) -> None:
        if done > 8 * MIB:
            started.set()

    async def scenario() -> None:
        task = asyncio.create_task(target.push(local, local.name, progress))
        await until(started.is_set, what="8 MiB pushed", interval=0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    client = s3_server.client()
    assert keys(s3_server, bucket) == []
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


class _NoBody:
    def stream(self, **kwargs) -> Iterator[bytes]:
        return iter(())


def sent_headers(target: S3Destination, answer: bool = False) -> list[tuple[str, dict[str, str]]]:
    """The method and headers of every request the destination's client sends from now on
    (when `answer`, none leaves: each is answered 200 with no body)."""
    sent: list[tuple[str, dict[str, str]]] = []

    def record(request, **kwargs):
        headers = {
            k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()
        }
        sent.append((request.method, headers))
        return AWSResponse(request.url, 200, {}, _NoBody()) if answer else None

    target.client.meta.events.register("before-send.s3", record)
    return sent


def test_parts_go_with_no_checksum_header_and_a_signed_body_over_http(s3_server, tmp_path):
    """Several S3-compatible services refuse boto3's checksum headers. Over plain HTTP the
    body's SHA-256 in the signature is its only check in transit (the server checks it)."""
    bucket = s3_server.bucket()
    local = an_archive(tmp_path, size=16 * MIB + 1)
    target = destination(s3_server, bucket)
    sent = sent_headers(target)
    asyncio.run(target.push(local, local.name, lambda done: None))
    parts = [headers for method, headers in sent if method == "PUT"]
    data = local.read_bytes()
    pieces = (data[: 8 * MIB], data[8 * MIB : 16 * MIB], data[16 * MIB :])
    signed = sorted(h["x-amz-content-sha256"] for h in parts)
    assert signed == sorted(sha256(p).hexdigest() for p in pieces)
    for _, headers in sent:
        assert not [k for k in headers if "checksum" in k or k == "content-md5"]
        assert "aws-chunked" not in headers.get("content-encoding", "")


def test_bodies_go_unsigned_over_https():
    """TLS guards the body: botocore is not made to read and hash every part first."""
    settings = S3Settings(
        endpoint_url="https://s3.example.test", bucket="backups", access_key="key"
    )
    target = S3Destination(settings, Secrets(secret_key="secret"))
    sent = sent_headers(target, answer=True)
    target.client.upload_part(
        Bucket="backups", Key="k", UploadId="u", PartNumber=1, Body=b"x" * MIB
    )
    ((method, headers),) = sent
    assert method == "PUT"
    assert headers["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD"
    assert not [k for k in headers if "checksum" in k or k == "content-md5"]
