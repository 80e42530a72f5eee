"""What the update check learns beyond digests, against the real loopback registry: each
newer image's release from its labels (its config blob read once, its layers never), the
rate limit a registry front announces (and the background check leaving a registry with
a low quota alone), and the auto-update's cooldown and maintenance window."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.stacks.test_updates import check, summary_of
from tests.support.images import SLEEP
from tests.support.stacks import act, compose_text, service

pytestmark = pytest.mark.docker

OCI = "org.opencontainers.image."


@pytest.fixture(scope="module")
def labelled(built_images) -> dict[str, str]:
    """Two releases of one project, labelled as CI pipelines label them: their references."""

    def make(version: str) -> str:
        labels = {
            OCI + "version": version,
            OCI + "source": "https://github.com/team/web",
            OCI + "revision": "0123456789abcdef0123456789abcdef0123456" + version[0],
        }
        return built_images.build(f"labelled-{version}", SLEEP, None, labels)

    return {"old": make("1.0.0"), "new": make("1.1.0")}


def test_a_newer_images_release_is_read_from_its_labels_once_and_without_its_layers(
    admin_client, make_stack, registry, docker_client, labelled
):
    name = f"rel/{uuid.uuid4().hex[:8]}"
    repo = f"{registry.host}/{name}"
    registry.push(labelled["old"], name, "1")
    stack_id = make_stack("rel", compose_text(web=service(f"{repo}:1")))
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    new_digest = registry.push(labelled["new"], name, "1")
    docker_client.api.tag(labelled["old"], repo, "1")
    before = len(registry.requests())

    check(admin_client)

    (image,) = summary_of(admin_client, stack_id)["images"]
    assert image["remote_digest"] == new_digest and image["current_version"] == "1.0.0"
    assert image["release"]["version"] == "1.1.0" and image["jump"] == "minor"
    assert image["release"]["link"] == "https://github.com/team/web/releases"
    asked = [r for r in registry.requests()[before:] if name in r[1]]
    blobs = [path for method, path in asked if "/blobs/" in path]
    config = docker_client.images.get(labelled["new"]).id
    assert blobs == [f"/v2/{name}/blobs/{config}"]  # the config only: never a layer
    assert [m for m, p in asked if "/manifests/" in p].count("GET") == 1

    check(admin_client)  # read once per digest: a HEAD and nothing more
    again = [r for r in registry.requests()[before + len(asked) :] if name in r[1]]
    assert again == [("HEAD", f"/v2/{name}/manifests/1")]


class RateLimitFront:
    """A front of the loopback registry that announces Docker Hub's rate-limit headers
    (`remaining` is the test's to set), counting what it is asked."""

    def __init__(self, registry, remaining: int) -> None:
        self.remaining = remaining
        self.asked: list[tuple[str, str]] = []
        front = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                front.asked.append((self.command, self.path))
                answer = httpx.request(
                    self.command,
                    registry.url + self.path,
                    headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
                    timeout=30,
                )
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("ratelimit-limit", "100;w=21600")
                self.send_header("ratelimit-remaining", f"{front.remaining};w=21600")
                body = answer.content if self.command != "HEAD" else b""
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_HEAD = _forward

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def front(registry):
    made = RateLimitFront(registry, remaining=76)
    yield made
    made.close()


def test_a_registrys_rate_limit_is_kept_and_a_low_quota_is_not_spent_by_the_background_check(
    app, admin_client, make_stack, registry, front
):
    name = f"quota/{uuid.uuid4().hex[:8]}"
    registry.push("stackyard-test/busybox:1", name, "1")
    stack_id = make_stack("quota", compose_text(web=service(f"{front.host}/{name}:1")))

    check(admin_client)
    quota = next(
        q
        for q in admin_client.get("/api/stacks/updates").json()["registries"]
        if q["registry"] == front.host
    )
    assert (quota["limit"], quota["remaining"], quota["window_seconds"]) == (100, 76, 21600)
    assert quota["waiting"] is False
    assert summary_of(admin_client, stack_id)["images"][0]["remote_digest"]

    front.remaining = 3
    check(admin_client)  # by hand: asked, whatever the quota
    quota = next(
        q
        for q in admin_client.get("/api/stacks/updates").json()["registries"]
        if q["registry"] == front.host
    )
    assert quota["remaining"] == 3 and quota["waiting"] is True
    asked = len(front.asked)
    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update, True)  # the watch's
    assert len(front.asked) == asked  # it waits instead of spending the quota


def test_the_auto_update_waits_for_the_cooldown_and_the_maintenance_window(
    app, admin_client, make_stack, registry, docker_client
):
    from tests.stacks.test_updates import publish_newer

    name = f"cool/{uuid.uuid4().hex[:8]}"
    registry.push("stackyard-test/busybox:1", name, "1")
    repo = f"{registry.host}/{name}"
    stack_id = make_stack("cool", compose_text(web=service(f"{repo}:1")))
    policy = {
        "mode": "auto",
        "health_timeout": 30,
        "settle": 1,
        "cooldown_hours": 24,
        "window": "0 3 * * *",
        "window_minutes": 60,
    }
    assert admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=policy).status_code == 204
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    publish_newer(registry, docker_client, repo)
    check(admin_client)
    first_seen = datetime.fromisoformat(
        summary_of(admin_client, stack_id)["images"][0]["first_seen"]
    )

    def auto_update_at(moment: datetime) -> dict:
        stacks = app.state.services.stacks
        app.state.test_portal.call(
            stacks.updates.auto_update, lambda s: stacks.run(s, "update"), moment
        )
        return summary_of(admin_client, stack_id)

    noon = (first_seen + timedelta(days=2)).replace(hour=12, minute=0)
    outside = auto_update_at(noon)
    assert outside["has_update"] is True
    assert outside["last_auto_update"]["outcome"] == "skipped"
    assert "maintenance window (0 3 * * *)" in outside["last_auto_update"]["detail"]

    next_window = first_seen.replace(hour=3, minute=10)
    young = auto_update_at(next_window + timedelta(days=0 if first_seen.hour < 3 else 1))
    assert young["has_update"] is True
    assert "24 h old (cooldown)" in young["last_auto_update"]["detail"]

    applied = auto_update_at(noon.replace(hour=3, minute=10))
    assert applied["has_update"] is False
    assert applied["last_auto_update"]["outcome"] == "updated", applied["last_auto_update"]
    assert admin_client.get(f"/api/stacks/{stack_id}/run").json()["status"] == "succeeded"
