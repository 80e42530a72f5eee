"""A compromised agent cannot run script in the central's origin: what it answers through
the proxy is data (only the content types agent routes send, sandboxed, downloads as
attachments), never a page."""

from __future__ import annotations

import json

import pytest

from tests.agents.hostile import Answer, hostile_agent  # noqa: F401 (a fixture)
from tests.support.service import free_port

SCRIPT = b"<script>fetch('/api/users', {method: 'POST'})</script>"


@pytest.fixture
def base(admin_client, hostile_agent):  # noqa: F811
    body = {"name": "looks-fine", "url": hostile_agent.url, "token": hostile_agent.token}
    assert admin_client.post("/api/agents/test", json=body).json()["ok"]
    created = admin_client.post("/api/agents", json=body)
    assert created.status_code == 201, created.text
    return f"/api/agents/{created.json()['id']}"


@pytest.mark.parametrize(
    "answer",
    [
        Answer(content_type="text/html", body=b"<html>" + SCRIPT),
        Answer(content_type="TEXT/HTML; charset=utf-8", body=SCRIPT),
        Answer(content_type="application/javascript", body=b"alert(1)"),
        Answer(content_type="image/svg+xml", body=b"<svg onload='alert(1)'/>"),
        Answer(status=500, content_type="text/html", body=b"<h1>error</h1>" + SCRIPT),
        Answer(content_type="application/xhtml+xml", body=SCRIPT),
    ],
    ids=["html", "html-upper", "javascript", "svg", "html-error", "xhtml"],
)
def test_a_page_from_an_agent_is_refused(admin_client, hostile_agent, base, answer):  # noqa: F811
    hostile_agent.answers["stacks/looks-harmless"] = answer
    response = admin_client.get(f"{base}/stacks/looks-harmless")
    assert response.status_code == 502
    assert response.headers["content-type"] == "application/json"
    media = answer.content_type.split(";")[0].lower()
    assert media in response.json()["detail"]
    assert b"<script" not in response.content and b"alert" not in response.content


def test_what_passes_is_sandboxed_data(admin_client, hostile_agent, base):  # noqa: F811
    hostile_agent.answers["stacks/fine"] = Answer(body=b'{"id": "fine"}')
    fine = admin_client.get(f"{base}/stacks/fine")
    assert fine.status_code == 200 and fine.json() == {"id": "fine"}
    assert fine.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert fine.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("content_type", "disposition", "served_as"),
    [
        ("text/html", 'inline; filename="page.html"', "application/octet-stream"),
        ("image/svg+xml", None, "application/octet-stream"),
        ("text/plain; charset=utf-8", None, "text/plain; charset=utf-8"),
    ],
)
def test_a_file_from_an_agent_is_a_download(
    admin_client,
    hostile_agent,  # noqa: F811
    base,
    content_type,
    disposition,
    served_as,
):
    headers = {"Content-Disposition": disposition} if disposition else {}
    hostile_agent.answers["files/download"] = Answer(
        content_type=content_type, body=SCRIPT, headers=headers
    )
    response = admin_client.get(f"{base}/files/download", params={"path": "page.html"})
    assert response.status_code == 200
    assert response.content == SCRIPT  # the user's file, as it is
    assert response.headers["content-type"] == served_as
    assert response.headers["content-disposition"].startswith("attachment")
    if disposition:
        assert 'filename="page.html"' in response.headers["content-disposition"]
    assert response.headers["content-security-policy"] == "sandbox; default-src 'none'"


def _relayed(*entries: dict) -> dict[str, str]:
    return {"x-stackyard-audit": json.dumps(list(entries))}


def _entry(**changes: str) -> dict:
    return {
        "actor": "admin",
        "action": "stack.env",
        "target": "app",
        "outcome": "success",
        "detail": None,
    } | changes


def test_only_what_an_agent_audits_for_this_request_is_recorded_as_its_report(
    admin_client,
    hostile_agent,  # noqa: F811
    base,
):
    hostile_agent.answers["stacks/app/env"] = Answer(
        headers=_relayed(
            _entry(),  # the request's user, a known action: kept, as the agent's report
            _entry(actor="alice"),  # another user
            _entry(action="user.create", actor="admin", target="mallory"),  # not an agent's
            _entry(action="wipe.everything"),  # unknown
            _entry(outcome="fine, really"),
        )
    )
    assert admin_client.get(f"{base}/stacks/app/env").status_code == 200
    entries = admin_client.get("/api/audit").json()["items"]
    relayed = [e for e in entries if e["target"] and e["target"].startswith("looks-fine:")]
    assert [(e["actor"], e["action"], e["target"], e["outcome"], e["detail"]) for e in relayed] == [
        ("admin", "stack.env", "looks-fine: app", "success", "reported by agent looks-fine")
    ]


@pytest.mark.parametrize(
    "header",
    [
        '{"actor": "admin"}',
        json.dumps([_entry(actor=1)]),
        json.dumps([_entry(target=[])]),
        json.dumps([_entry(detail={"a": 1})]),
        "not json",
    ],
)
def test_a_malformed_audit_report_is_dropped(admin_client, hostile_agent, base, header):  # noqa: F811
    hostile_agent.answers["stacks/app/env"] = Answer(headers={"x-stackyard-audit": header})
    assert admin_client.get(f"{base}/stacks/app/env").status_code == 200
    entries = admin_client.get("/api/audit").json()["items"]
    assert not [e for e in entries if e["target"] and e["target"].startswith("looks-fine:")]


def test_a_test_that_does_not_reach_the_agent_is_audited_as_a_failure(admin_client):
    body = {"name": "gone", "url": f"http://127.0.0.1:{free_port()}", "token": "t" * 40}
    probe = admin_client.post("/api/agents/test", json=body).json()
    assert probe["ok"] is False
    entry = admin_client.get("/api/audit").json()["items"][0]
    assert (entry["action"], entry["outcome"]) == ("agent.test", "failure")
    assert entry["detail"] == probe["detail"]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Answer(body=b"<html>not json"), "cannot read"),
        (Answer(body=b"[" * 100_000 + b"]" * 100_000), "cannot read"),
        (Answer(body=b'{"status": "ok", "x": "' + b"x" * (17 * 2**20) + b'"}'), "more than 16 MiB"),
        (Answer(body=b'{"status": "ok", "version": "1.0.0"}', drip=0.5), "No answer within"),
    ],
    ids=["malformed", "nested", "oversized", "drip"],
)
def test_a_malformed_oversized_or_dripping_answer_is_an_error_with_why(
    admin_client,
    hostile_agent,  # noqa: F811
    base,
    answer,
    said,
):
    """What the central reads itself (here the agent's health, at a test) is read within
    a time limit and a size bound, and only when it has the shape it must have."""
    hostile_agent.answers["health"] = answer
    tested = admin_client.post(f"{base}/test")
    assert tested.status_code == 200 and not tested.json()["ok"]
    assert said in tested.json()["detail"]
    assert said in admin_client.get(base).json()["last_error"]
