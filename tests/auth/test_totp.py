"""Two-factor sign-in for local accounts (RFC 6238 codes, recovery codes): enrolment,
sign-in, replays and guesses, an admin requiring and resetting it, API tokens untouched."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyotp
from fastapi.testclient import TestClient

from stackyard.auth.totp import qr_svg
from tests.support.service import USER_PASSWORD, new_client, sign_in


def _login(client: TestClient, code: str | None = None, user: str = "alice"):
    body = {"username": user, "password": USER_PASSWORD}
    if code is not None:
        body["code"] = code
    return client.post("/api/auth/login", json=body)


def enrol(client: TestClient) -> tuple[pyotp.TOTP, list[str]]:
    """Set up two-factor for the signed-in user as the account page does."""
    wrong = client.post("/api/auth/two-factor/setup", json={"password": "not-the-password"})
    assert wrong.status_code == 403
    setup = client.post("/api/auth/two-factor/setup", json={"password": USER_PASSWORD})
    assert setup.status_code == 200, setup.text
    shown = setup.json()
    assert shown["uri"].startswith("otpauth://totp/Stackyard:alice?secret=")
    assert shown["qr_svg"].startswith("<svg") and "<script" not in shown["qr_svg"]
    # A standalone SVG document: without its namespace a browser draws nothing of it.
    assert 'xmlns="http://www.w3.org/2000/svg"' in shown["qr_svg"].split(">", 1)[0]
    app = pyotp.TOTP(shown["secret"])
    assert client.get("/api/auth/me").json()["two_factor"] is False  # not before the code
    bad = client.post("/api/auth/two-factor/confirm", json={"code": "000000"})
    assert bad.status_code == 400 and "not right" in bad.json()["detail"]
    done = client.post("/api/auth/two-factor/confirm", json={"code": app.now()})
    assert done.status_code == 200, done.text
    return app, done.json()["recovery_codes"]


def next_code(app: pyotp.TOTP) -> str:
    """The code of the next 30 s step (the current one was used by the enrolment)."""
    return app.at(time.time() + 30)


def test_enrolment_then_sign_in_asks_for_the_code(app, admin_client, user_client):
    authenticator, codes = enrol(user_client)
    assert len(codes) == 10 and len(set(codes)) == 10
    me = user_client.get("/api/auth/me").json()
    assert (me["two_factor"], me["recovery_codes_left"]) == (True, 10)

    browser = new_client(app)
    first = _login(browser)
    assert first.status_code == 200 and first.json() == {"user": None, "code_needed": True}
    assert "stackyard_session" not in browser.cookies
    wrong = _login(browser, "123456")
    assert wrong.status_code == 401 and "stackyard_session" not in browser.cookies
    code = next_code(authenticator)
    right = _login(browser, code)
    assert right.status_code == 200 and right.json()["user"]["username"] == "alice"
    # The same code never works twice (someone who saw it typed cannot use it).
    assert _login(new_client(app), code).status_code == 401

    audit = admin_client.get("/api/audit").json()["items"]
    mine = [(e["action"], e["outcome"], e["detail"]) for e in audit if e["target"] == "alice"]
    assert ("auth.sign_in", "success", "password and code") in mine
    assert ("auth.sign_in", "failure", "Invalid username, password or code") in mine
    assert ("auth.two_factor.enrol", "success", None) in mine


def test_a_code_used_before_is_said_so_whatever_the_password(app, user_client):
    """The code that turned two-factor on, typed again at sign-in, is refused as used, not
    as a wrong password; a wrong password with it is answered the same (the answer says
    nothing of the password), and a wrong code as before."""
    authenticator, _ = enrol(user_client)
    code = next_code(authenticator)
    assert _login(new_client(app), code).status_code == 200
    again = _login(new_client(app), code)
    assert again.status_code == 401 and "already used" in again.json()["detail"]
    wrong_password = new_client(app).post(
        "/api/auth/login", json={"username": "alice", "password": "not-it", "code": code}
    )
    assert (wrong_password.status_code, wrong_password.json()) == (401, again.json())
    wrong = _login(new_client(app), "000000")
    assert wrong.json()["detail"] == "Invalid username, password or code"


def test_a_recovery_code_works_once(app, user_client):
    _, codes = enrol(user_client)
    browser = new_client(app)
    assert _login(browser, codes[3].upper().replace("-", " ")).status_code == 200  # as typed
    assert browser.get("/api/auth/me").json()["recovery_codes_left"] == 9
    assert _login(new_client(app), codes[3]).status_code == 401


def test_wrong_codes_are_throttled_like_wrong_passwords(app, user_client):
    authenticator, _ = enrol(user_client)
    clock = [5000.0]
    app.state.services.throttle.clock = lambda: clock[0]
    browser = new_client(app)
    statuses = [_login(browser, "000000").status_code for _ in range(6)]
    assert statuses == [401] * 5 + [429]
    # Refused while throttled, even with the right code.
    assert _login(browser, next_code(authenticator)).status_code == 429


def test_an_admin_requires_and_resets_two_factor_and_tokens_are_unaffected(
    app, admin_client, user_client
):
    token = user_client.post("/api/auth/tokens", json={"name": "ci", "password": USER_PASSWORD})
    bearer = {"Authorization": f"Bearer {token.json()['token']}"}
    required = admin_client.patch("/api/users/alice", json={"two_factor_required": True})
    assert required.status_code == 200 and required.json()["two_factor_required"] is True

    browser = new_client(app)
    sign_in(browser, "alice", USER_PASSWORD)
    assert browser.get("/api/auth/me").json()["two_factor_due"] is True
    blocked = browser.get("/api/stacks")
    assert blocked.status_code == 403 and "two-factor" in blocked.json()["detail"]
    # Nor can a token made now get round it.
    minted = browser.post("/api/auth/tokens", json={"name": "x", "password": USER_PASSWORD})
    assert minted.status_code == 403
    assert browser.get("/api/stacks", headers=bearer).status_code == 200  # a token: unaffected
    enrol(browser)
    assert browser.get("/api/stacks").status_code == 200
    off = browser.post("/api/auth/two-factor/off", json={"password": USER_PASSWORD})
    assert off.status_code == 403 and "requires" in off.json()["detail"]

    row = next(u for u in admin_client.get("/api/users").json() if u["username"] == "alice")
    assert (row["two_factor"], row["two_factor_required"]) == (True, True)
    assert admin_client.post("/api/users/alice/two-factor/reset").status_code == 204
    assert browser.get("/api/auth/me").status_code == 401  # sessions ended
    assert browser.get("/api/stacks", headers=bearer).status_code == 401  # tokens revoked
    again = new_client(app)
    assert _login(again).json()["user"]["username"] == "alice"  # no code: it is off
    assert again.get("/api/auth/me").json()["two_factor_due"] is True  # set it up again
    audit = admin_client.get("/api/audit").json()["items"]
    assert any(e["action"] == "auth.two_factor.reset" and e["actor"] == "admin" for e in audit)


def test_a_user_turns_it_off_with_the_password(app, user_client):
    enrol(user_client)
    assert (
        user_client.post("/api/auth/two-factor/off", json={"password": "wrong"}).status_code == 403
    )
    off = user_client.post("/api/auth/two-factor/off", json={"password": USER_PASSWORD})
    assert off.status_code == 204
    assert _login(new_client(app)).json()["user"]["username"] == "alice"
    again = user_client.post("/api/auth/two-factor/confirm", json={"code": "123456"})
    assert again.status_code == 409  # nothing being set up


def test_the_web_tests_are_fed_the_qr_code_the_server_sends():
    """The UI's tests draw the set-up from `web/src/test/twoFactorSetup.json`: it is what
    the server makes of its address (a hand-written SVG there once hid a QR code browsers
    could not draw)."""
    fixture = json.loads(
        (Path(__file__).parents[2] / "web/src/test/twoFactorSetup.json").read_text()
    )
    assert fixture["qr_svg"] == qr_svg(fixture["uri"])
    assert fixture["qr_svg"].startswith('<svg xmlns="http://www.w3.org/2000/svg"')
