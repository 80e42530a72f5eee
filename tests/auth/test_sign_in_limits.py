"""Two-factor sign-in against a real `stackyard serve`, as an attacker who knows (or
guesses) the password tries it: many addresses, many requests at once.

- A code and a recovery code are marked used in the database, atomically: of ten
  concurrent sign-ins with one code, exactly one gets in.
- Wrong codes are limited per account across addresses: after a few, the account's code
  attempts go one at a time with a growing wait; the owner still gets in with a recovery
  code (or by waiting).
- The password step never confirms a password of an account with two-factor on, and a
  wrong password and a wrong code answer the same."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing

import httpx
import pyotp
import pytest

from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    USER_PASSWORD,
    ServerProcess,
    service_env,
    sign_in,
    start_server,
)


def same_words(one: str, other: str) -> bool:
    """Two answers alike but for the seconds they ask to wait."""

    def words(text: str) -> str:
        return re.sub(r"\d+ seconds?", "N seconds", text)

    return words(one) == words(other)


@pytest.fixture(scope="module")
def admin(shared_server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=shared_server.url, timeout=ANSWER_WITHIN) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def from_address(server: ServerProcess, address: str) -> httpx.Client:
    """A client whose requests come from `address` (any of 127.0.0.0/8 reaches the
    server on 127.0.0.1): to the service, another machine."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.url, transport=transport, timeout=ANSWER_WITHIN)


def enrolled(server: ServerProcess, admin: httpx.Client, name: str) -> tuple[pyotp.TOTP, list[str]]:
    """A new operator `name` (password USER_PASSWORD) with two-factor on: its
    authenticator and recovery codes."""
    made = admin.post(
        "/api/users", json={"username": name, "password": USER_PASSWORD, "role": "operator"}
    )
    assert made.status_code == 201, made.text
    with from_address(server, "127.0.0.2") as client:
        sign_in(client, name, USER_PASSWORD)
        setup = client.post("/api/auth/two-factor/setup", json={"password": USER_PASSWORD})
        app = pyotp.TOTP(setup.json()["secret"])
        done = client.post("/api/auth/two-factor/confirm", json={"code": app.now()})
        assert done.status_code == 200, done.text
        return app, done.json()["recovery_codes"]


def login(
    server: ServerProcess, address: str, name: str, password: str, code: str | None = None
) -> httpx.Response:
    body = {"username": name, "password": password} | ({"code": code} if code else {})
    with from_address(server, address) as client:
        return client.post("/api/auth/login", json=body)


def at_once(count: int, attempt: Callable[[int], httpx.Response]) -> list[httpx.Response]:
    """`count` attempts sent together (each from a thread of its own, released at once)."""
    start = threading.Barrier(count)
    answers: list[httpx.Response | None] = [None] * count

    def run(i: int) -> None:
        start.wait()
        answers[i] = attempt(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(ANSWER_WITHIN)
    assert all(a is not None for a in answers), "an attempt did not come back"
    return [a for a in answers if a is not None]


def test_one_code_or_recovery_code_signs_in_once_among_ten_concurrent_requests(
    shared_server, admin
):
    """Ten sign-ins with the same code, each from an address of its own, sent together:
    the database marks the code used for one of them (a conditional update, whatever
    process or thread checks it), so exactly one gets in."""
    app, recovery = enrolled(shared_server, admin, "conny")
    code = app.at(time.time() + 30)  # the next step's: the enrolment used this one
    answers = at_once(
        10, lambda i: login(shared_server, f"127.0.1.{i + 1}", "conny", USER_PASSWORD, code)
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) == 1, statuses
    assert set(statuses) <= {200, 401, 429}, statuses

    answers = at_once(
        10,
        lambda i: login(shared_server, f"127.0.2.{i + 1}", "conny", USER_PASSWORD, recovery[0]),
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) == 1, statuses
    assert set(statuses) <= {200, 401}, statuses


@pytest.mark.postgres
def test_one_code_signs_in_once_across_two_services_on_one_postgresql(tmp_path, postgres_database):
    """Two processes on one database, each checking half of ten concurrent sign-ins with
    one code: the database, not a lock in either process, lets exactly one in."""
    key = "k" * 48  # both open the same sealed two-factor secret
    servers = []
    try:
        for name in ("one", "two"):
            folder = tmp_path / name
            (folder / "stacks").mkdir(parents=True)
            env = service_env(folder, DATABASE_URL=postgres_database, STACKYARD_SECRET_KEY=key)
            servers.append(start_server(folder, env=env))
        with httpx.Client(base_url=servers[0].url, timeout=ANSWER_WITHIN) as admin:
            sign_in(admin, "admin", ADMIN_PASSWORD)
            app, _ = enrolled(servers[0], admin, "paula")
        code = app.at(time.time() + 30)
        answers = at_once(
            10,
            lambda i: login(servers[i % 2], f"127.0.7.{i + 1}", "paula", USER_PASSWORD, code),
        )
        statuses = sorted(a.status_code for a in answers)
        assert statuses.count(200) == 1, statuses
    finally:
        for server in servers:
            server.stop()


def test_wrong_codes_from_many_addresses_are_limited_per_account_and_the_owner_gets_in(
    shared_server, admin
):
    """Forty addresses, one wrong code each, sent together: only the account's first few
    codes are checked, the rest are refused (429) without being checked, whoever sends
    them and whatever the password. The owner still gets in with a recovery code."""
    _, recovery = enrolled(shared_server, admin, "gwen")
    answers = at_once(
        40, lambda i: login(shared_server, f"127.0.3.{i + 1}", "gwen", USER_PASSWORD, "000000")
    )
    statuses = [a.status_code for a in answers]
    checked, refused = statuses.count(401), statuses.count(429)
    assert checked + refused == 40, statuses
    assert checked <= 6 and refused >= 34, statuses
    said = next(a for a in answers if a.status_code == 429)
    assert int(said.headers["retry-after"]) >= 1
    assert "recovery code" in said.json()["detail"]

    # Under the limit a wrong password answers as a wrong code does: nothing is learnt.
    wrong_password = login(shared_server, "127.0.4.1", "gwen", "not-the-password", "111111")
    wrong_code = login(shared_server, "127.0.4.2", "gwen", USER_PASSWORD, "111111")
    assert wrong_password.status_code == wrong_code.status_code == 429
    # (The same words; the seconds to wait may count down between the two answers.)
    assert same_words(wrong_password.json()["detail"], wrong_code.json()["detail"])

    # The owner: a recovery code is not held back (it cannot be guessed).
    owner = login(shared_server, "127.0.4.9", "gwen", USER_PASSWORD, recovery[0])
    assert owner.status_code == 200, owner.text


def test_the_password_step_never_confirms_the_password_of_an_account_with_two_factor(
    shared_server, admin
):
    """Without a code, a right and a wrong password both ask for the code; with one, a
    wrong password and a wrong code answer alike: the password is judged with the code."""
    app, _ = enrolled(shared_server, admin, "hugo")
    right = login(shared_server, "127.0.5.1", "hugo", USER_PASSWORD)
    wrong = login(shared_server, "127.0.5.2", "hugo", "not-the-password")
    assert right.status_code == wrong.status_code == 200
    assert right.json() == wrong.json() == {"user": None, "code_needed": True}

    code = app.at(time.time() + 30)
    wrong_password = login(shared_server, "127.0.5.3", "hugo", "not-the-password", code)
    wrong_code = login(shared_server, "127.0.5.4", "hugo", USER_PASSWORD, "000000")
    assert wrong_password.status_code == wrong_code.status_code == 401
    # (The same words; the seconds to wait may count down between the two answers.)
    assert same_words(wrong_password.json()["detail"], wrong_code.json()["detail"])
    with closing(from_address(shared_server, "127.0.5.5")) as client:
        body = {"username": "hugo", "password": USER_PASSWORD, "code": code}
        assert client.post("/api/auth/login", json=body).status_code == 200
