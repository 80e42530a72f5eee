"""An admin sets the identity provider up: a set-up turned on is checked against the
provider's discovery document before it is saved, and "Test" reads it without saving;
each refusal says why in words. A provider on loopback (`forged_provider`) answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.support.forged_provider import ForgedProvider
from tests.support.service import ADMIN_PASSWORD, new_client, settings_in, sign_in, started


@pytest.fixture
def admin(central_app, tmp_path) -> Iterator[TestClient]:
    with started(central_app, settings_in(tmp_path)):
        client = new_client(central_app)
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


@pytest.fixture(autouse=True)
def _honest(forged_provider: ForgedProvider) -> None:
    forged_provider.discovery = {}


def body(issuer: str, enabled: bool = True) -> dict:
    config = {"enabled": enabled, "name": "Corp", "issuer": issuer, "client_id": "stackyard"}
    return {"config": config, "client_secret": "s3cret"}


def test_a_provider_whose_document_is_right_is_tested_and_saved(admin, forged_provider):
    tested = admin.post("/api/identity-provider/test", json=body(forged_provider.issuer))
    assert tested.status_code == 200, tested.text
    assert tested.json()["detail"].startswith(
        f"The discovery document at {forged_provider.issuer}/.well-known/openid-configuration "
        "names the sign-in at "
    )
    assert admin.get("/api/identity-provider").json()["config"]["enabled"] is False  # not saved
    saved = admin.put("/api/identity-provider", json=body(forged_provider.issuer))
    assert saved.status_code == 200, saved.text
    assert saved.json()["config"]["issuer"] == forged_provider.issuer


def test_a_document_that_does_not_fit_is_refused_at_save_with_why(admin, forged_provider):
    forged_provider.discovery = {"issuer": "https://idp.example"}
    where = f"{forged_provider.issuer}/.well-known/openid-configuration"
    for answer in (
        admin.post("/api/identity-provider/test", json=body(forged_provider.issuer)),
        admin.put("/api/identity-provider", json=body(forged_provider.issuer)),
    ):
        assert answer.status_code == 400
        assert answer.json()["detail"].startswith(
            f"The discovery document at {where} cannot be used: the provider calls itself "
            "'https://idp.example'"
        )
    assert admin.get("/api/identity-provider").json()["config"]["enabled"] is False
    # Turned off, it is saved as it is (nothing is asked of the provider).
    assert admin.put("/api/identity-provider", json=body("http://127.0.0.1:9", False)).is_success


def test_a_provider_that_cannot_be_reached_is_refused_in_words(admin):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    answer = admin.put("/api/identity-provider", json=body(f"http://127.0.0.1:{port}"))
    assert answer.status_code == 400
    assert answer.json()["detail"].endswith(
        f"cannot be reached: connection refused at 127.0.0.1:{port}: nothing listens there"
    )
