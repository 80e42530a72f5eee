"""Schemathesis over the whole OpenAPI schema, against a real `stackyard serve`: signed in
as an admin, as an operator, as a viewer and not at all, with every check on.

It fails on any 5xx, on any response that does not match the documented schema, and on
any operation that answers a role the policy below does not allow. The server works in
the test's temporary folders; the fuzzer's own users keep their tokens (it never
changes, revokes or removes them, see `_spares_the_fuzzers_own_credentials`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from http.cookiejar import DefaultCookiePolicy

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig

from stackyard.app import openapi_text
from tests.support.service import (
    ADMIN_PASSWORD,
    USER_PASSWORD,
    ServerProcess,
    service_env,
    sign_in,
    start_server,
)

# Backup uploads are tars: random bytes, and now and then an empty tar (two zero blocks).
schemathesis.openapi.media_type(
    "application/x-tar", st.one_of(st.binary(max_size=4096), st.just(b"\0" * 1024))
)

#: The least role each operation needs (None: no sign-in). New operations must be added.
POLICY: dict[str, str | None] = {
    "health": None,
    "login": None,
    "signInOptions": None,
    "startProviderSignIn": None,
    "finishProviderSignIn": None,
    "me": "viewer",
    "logout": "viewer",
    "beginTwoFactor": "viewer",
    "confirmTwoFactor": "viewer",
    "turnOffTwoFactor": "viewer",
    "getIdentityProvider": "admin",
    "setIdentityProvider": "admin",
    "testIdentityProvider": "admin",
    "resetUserTwoFactor": "admin",
    "changePassword": "viewer",
    "listTokens": "viewer",
    "createToken": "viewer",
    "deleteToken": "viewer",
    "systemInfo": "viewer",
    "listStacks": "viewer",
    "getStack": "viewer",
    "stackUpdates": "viewer",
    "stackRun": "viewer",
    "stackRunEvents": "viewer",
    "stackAction": "operator",
    "checkStackUpdates": "operator",
    "setAutoUpdate": "operator",
    "setUpdatePolicy": "operator",
    "inheritUpdatePolicy": "operator",
    "defaultUpdatePolicy": "viewer",
    "setDefaultUpdatePolicy": "admin",
    "createStack": "admin",
    "convertDockerRun": "admin",
    "deleteStack": "admin",
    "stackDeletePlan": "admin",
    "saveCompose": "admin",
    "saveEnv": "admin",
    "getSecrets": "admin",
    "saveSecrets": "admin",
    "listAudit": "admin",
    "listUsers": "admin",
    "createUser": "admin",
    "updateUser": "admin",
    "deleteUser": "admin",
    "setUserPassword": "admin",
    "listUserTokens": "admin",
    "revokeUserToken": "admin",
    "listRegistries": "admin",
    "setRegistry": "admin",
    "deleteRegistry": "admin",
    "listFolder": "admin",
    "readFile": "admin",
    "saveFile": "admin",
    "download": "admin",
    "makeFolder": "admin",
    "moveEntry": "admin",
    "uploadFile": "admin",
    "deleteEntry": "admin",
    "pathsExist": "admin",
    "stackLogs": "operator",
    "downloadStackLogs": "operator",
    "hostUsage": "viewer",
    "stackUsageHistory": "viewer",
    "outsideContainers": "viewer",
    "outsideContainerAction": "admin",
    "outsideContainerLogs": "admin",
    "backupInventory": "operator",
    "createBackup": "operator",
    "listBackups": "operator",
    "getBackup": "operator",
    "verifyBackup": "operator",
    "downloadBackup": "admin",
    "uploadBackup": "admin",
    "deleteBackup": "admin",
    "previewRestore": "admin",
    "restoreBackup": "admin",
    "listDestinations": "admin",
    "createDestination": "admin",
    "testUnsavedDestination": "admin",
    "getDestination": "admin",
    "updateDestination": "admin",
    "deleteDestination": "admin",
    "testDestination": "admin",
    "createRepository": "admin",
    "repositoryUse": "admin",
    "listGitRepositories": "viewer",
    "createGitRepository": "admin",
    "updateGitRepository": "admin",
    "deleteGitRepository": "admin",
    "pinGitHostKey": "admin",
    "forgetGitHostKey": "admin",
    "newGitDeployKey": "admin",
    "newGitWebhook": "admin",
    "syncGitRepository": "operator",
    "listGitStacks": "viewer",
    "getGitStack": "viewer",
    "createGitStack": "admin",
    "previewGitAdoption": "admin",
    "adoptGitStack": "admin",
    "updateGitStack": "admin",
    "detachGitStack": "admin",
    "previewGitChange": "operator",
    "applyGitChange": "operator",
    "gitWebhook": None,
    "gitAgentWebhook": None,
    "notificationCatalogue": "admin",
    "listNotificationChannels": "admin",
    "createNotificationChannel": "admin",
    "testUnsavedNotificationChannel": "admin",
    "getNotificationChannel": "admin",
    "updateNotificationChannel": "admin",
    "deleteNotificationChannel": "admin",
    "testNotificationChannel": "admin",
    "listNotificationDeliveries": "admin",
    "listNotificationRules": "admin",
    "createNotificationRule": "admin",
    "updateNotificationRule": "admin",
    "deleteNotificationRule": "admin",
    "listRemoteArchives": "admin",
    "deleteRemoteArchive": "admin",
    "pullRemoteArchive": "admin",
    "pushBackup": "admin",
    "listSchedules": "admin",
    "previewTimetable": "viewer",
    "createSchedule": "admin",
    "getSchedule": "admin",
    "updateSchedule": "admin",
    "deleteSchedule": "admin",
    "runSchedule": "admin",
    "listScheduleRuns": "admin",
    "listAgents": "viewer",
    "createAgent": "admin",
    "testUnsavedAgent": "admin",
    "getAgent": "viewer",
    "updateAgent": "admin",
    "deleteAgent": "admin",
    "testAgent": "admin",
    "agentStackUpdates": "viewer",
    "fleet": "viewer",
    "fleetHost": "viewer",
    "pushAgentBackup": "admin",
    "pullRemoteArchiveToAgent": "admin",
    "agentTransferRun": "viewer",
    "agentTransferRunEvents": "viewer",
    "systemUpdateStatus": "viewer",
    "startSystemUpdate": "admin",
    "endStream": "viewer",
    **{f"proxyAgent{m}": "viewer" for m in ("Get", "Post", "Put", "Patch", "Delete")},
    "backUpInto": "admin",
    "drillBackup": "operator",
    "listDrills": "operator",
    "createTunnelAgent": "admin",
    "enrolAgent": None,
    "rotateAgentKey": "admin",
    "diskReport": "viewer",
    "listPrunes": "viewer",
    "previewPrune": "admin",
    "prune": "admin",
    "pullImage": "operator",
    "removeImage": "operator",
    "removeVolume": "admin",
    "removeNetwork": "admin",
}
RANK = {None: -1, "viewer": 0, "operator": 1, "admin": 2}
ROLES = ["admin", "operator", "viewer", None]
FUZZ_USERS = {"admin", "fuzz-operator", "fuzz-viewer"}
#: Not fuzzed, each for a reason (each has tests of its own in test_auth, test_users and
#: tests/stacks): stack actions and the update check pull images and ask registries for
#: whatever image names the fuzzer invents, which would send traffic off this machine;
#: token ids are small integers, so revoking tokens would revoke the fuzzer's own; a
#: right guess of the password would revoke them too, and so would a reset of a fuzz
#: user's two-factor sign-in; a destination the fuzzer made or
#: tested would point anywhere (so none exists, and every operation on one is a 404); so
#: would an agent (none exists: its routes and the proxy answer 404), or a notification
#: channel (none exists: its test and history are a 404), or an identity provider (a
#: save of one turned on, and its test, read its discovery document).
NOT_FUZZED = {
    "stackAction",
    "checkStackUpdates",
    "deleteToken",
    "revokeUserToken",
    "changePassword",
    "createDestination",
    "updateDestination",
    "testUnsavedDestination",
    "createAgent",
    "updateAgent",
    "testUnsavedAgent",
    "createNotificationChannel",
    "updateNotificationChannel",
    "testUnsavedNotificationChannel",
    "setIdentityProvider",
    "testIdentityProvider",
    "resetUserTwoFactor",
    # A repository made at a path the fuzzer picks; a git repository's SSH address is
    # connected to when it is saved (its host key pinned): never anything but loopback.
    "createRepository",
    "createGitRepository",
    "updateGitRepository",
    "pinGitHostKey",
    # An agent that dials in would be made (none exists, as above).
    "createTunnelAgent",
    # The fuzz server runs on the run's shared engine, which no test prunes or removes
    # from (tests/disk uses engines of its own); a pull asks a registry for any name.
    "prune",
    "removeImage",
    "removeVolume",
    "removeNetwork",
    "pullImage",
}

CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            # Valid by the schema, refused by a rule the schema cannot say: a compose file
            # that compose itself refuses, a name taken, a path that is not there. (303:
            # the ways to and from an identity provider are browser navigations.)
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "303", "400", "401", "403", "404", "409", "429"]
            }
        }
    }
)
SCHEMA = schemathesis.openapi.from_dict(json.loads(openapi_text()), config=CONFIG)
REFUSED_SCHEMA = schemathesis.openapi.from_dict(
    json.loads(openapi_text()),
    config=SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}}),
)
EXAMPLES = int(os.environ.get("STACKYARD_FUZZ_EXAMPLES", "20"))
REFUSED_EXAMPLES = max(1, EXAMPLES // 4)


def test_policy_covers_every_operation():
    operations = {
        op["operationId"]
        for ops in json.loads(openapi_text())["paths"].values()
        for op in ops.values()
    }
    assert operations == set(POLICY)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory) -> Iterator[tuple[ServerProcess, dict]]:
    tmp_path = tmp_path_factory.mktemp("fuzz")
    stacks = tmp_path / "stacks"
    (stacks / "demo").mkdir(parents=True)
    (stacks / "demo" / "compose.yaml").write_text(
        "services:\n  web:\n    image: stackyard-test/busybox:1\n"
    )
    (stacks / "notes.txt").write_text("hello\n")
    # What made routes fail before: a symlink loop, a link out of the root, odd names.
    (stacks / "loop").symlink_to("loop")
    (stacks / "out").symlink_to(tmp_path)
    os.close(os.open(os.fsencode(stacks) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY))  # not UTF-8
    server = start_server(tmp_path, env=service_env(tmp_path))
    headers: dict[str | None, dict[str, str]] = {None: {}}
    with httpx.Client(base_url=server.url) as admin:
        sign_in(admin, "admin", ADMIN_PASSWORD)
        for role in ("operator", "viewer"):
            made = admin.post(
                "/api/users",
                json={"username": f"fuzz-{role}", "password": USER_PASSWORD, "role": role},
            )
            assert made.status_code == 201, made.text
        for role, (name, password) in {
            "admin": ("admin", ADMIN_PASSWORD),
            "operator": ("fuzz-operator", USER_PASSWORD),
            "viewer": ("fuzz-viewer", USER_PASSWORD),
        }.items():
            with httpx.Client(base_url=server.url) as client:
                sign_in(client, name, password)
                token = client.post("/api/auth/tokens", json={"name": "fuzz", "password": password})
                assert token.status_code == 201, token.text
                headers[role] = {"Authorization": f"Bearer {token.json()['token']}"}
    yield server, headers
    server.stop()


_SFTP_ON_LOOPBACK = {
    "name": "x",
    "settings": {"type": "sftp", "host": "127.0.0.1", "port": 1, "username": "x"},
    "secrets": {"password": "x"},
}
_AGENT_ON_LOOPBACK = {"name": "x", "url": "http://127.0.0.1:1", "token": "x"}
_WEBHOOK_ON_LOOPBACK = {"name": "x", "kind": "webhook", "secrets": {"url": "http://127.0.0.1:1"}}
_GIT_ON_LOOPBACK = {"name": "x", "url": "ssh://git@127.0.0.1:1/r.git", "auth": "ssh_key"}
#: A request to each operation that is not fuzzed, for the role check below.
UNFUZZED_REQUESTS = {
    "stackAction": ("POST", "/api/stacks/demo/actions/stop", None),
    "checkStackUpdates": ("POST", "/api/stacks/updates/check", None),
    "deleteToken": ("DELETE", "/api/auth/tokens/999999", None),
    "revokeUserToken": ("DELETE", "/api/users/fuzz-viewer/tokens/999999", None),
    "changePassword": (
        "PUT",
        "/api/auth/password",
        {"current_password": "x", "new_password": "y" * 16},
    ),
    "createDestination": ("POST", "/api/destinations", _SFTP_ON_LOOPBACK),
    "updateDestination": ("PATCH", "/api/destinations/1", {"name": "x"}),
    "testUnsavedDestination": ("POST", "/api/destinations/test", _SFTP_ON_LOOPBACK),
    "createAgent": ("POST", "/api/agents", _AGENT_ON_LOOPBACK),
    "updateAgent": ("PUT", "/api/agents/1", _AGENT_ON_LOOPBACK),
    "testUnsavedAgent": ("POST", "/api/agents/test", _AGENT_ON_LOOPBACK),
    "createNotificationChannel": ("POST", "/api/notifications/channels", _WEBHOOK_ON_LOOPBACK),
    "updateNotificationChannel": ("PATCH", "/api/notifications/channels/1", {"name": "x"}),
    "testUnsavedNotificationChannel": (
        "POST",
        "/api/notifications/channels/test",
        _WEBHOOK_ON_LOOPBACK,
    ),
    "setIdentityProvider": ("PUT", "/api/identity-provider", {"config": {"enabled": False}}),
    "testIdentityProvider": (
        "POST",
        "/api/identity-provider/test",
        {"config": {"issuer": "http://127.0.0.1:9"}},
    ),
    "resetUserTwoFactor": ("POST", "/api/users/fuzz-viewer/two-factor/reset", None),
    "createRepository": (
        "POST",
        "/api/destinations/repositories",
        {
            "name": "x",
            "settings": {"type": "repository", "location": {**_SFTP_ON_LOOPBACK["settings"]}},
        },
    ),
    "createGitRepository": ("POST", "/api/git/repositories", _GIT_ON_LOOPBACK),
    "updateGitRepository": ("PUT", "/api/git/repositories/x", _GIT_ON_LOOPBACK),
    "pinGitHostKey": ("POST", "/api/git/repositories/x/host-key", None),
    "createTunnelAgent": ("POST", "/api/agents/tunnel", {"name": "x"}),
    "prune": ("POST", "/api/disk/prune", {"ids": []}),
    "removeImage": ("DELETE", "/api/disk/images/sha256:0", None),
    "removeVolume": ("DELETE", "/api/disk/volumes/x?confirm=x", None),
    "removeNetwork": ("DELETE", "/api/disk/networks/x", None),
    "pullImage": ("POST", "/api/disk/images/pull", {"reference": "127.0.0.1:9/x:1"}),
}


@pytest.mark.docker
@pytest.mark.parametrize("operation_id", sorted(NOT_FUZZED))
def test_operations_not_fuzzed_refuse_the_roles_below_theirs(operation_id, fuzz_server):
    """What the fuzzer leaves out still refuses whoever may not reach it (the roles that
    may are tested in test_roles, test_auth and test_users)."""
    server, headers = fuzz_server
    method, path, body = UNFUZZED_REQUESTS[operation_id]
    for role in ROLES:
        if RANK[role] >= RANK[POLICY[operation_id]]:
            continue
        response = httpx.request(
            method, server.url + path, json=body, headers=headers[role], timeout=30
        )
        assert response.status_code == (401 if role is None else 403), (role, response.text)


class _NoCookies(DefaultCookiePolicy):
    """Each request carries only its role's header: a cookie the server sets (a sign-in
    the fuzzer got right) is never sent back."""

    def set_ok(self, cookie, request) -> bool:
        return False


@pytest.fixture(scope="module")
def sessions() -> Iterator[dict[str | None, requests.Session]]:
    """A kept-alive connection per role (a new one per request cost more than the request)."""
    made: dict[str | None, requests.Session] = {}
    for role in ROLES:
        made[role] = requests.Session()
        made[role].trust_env = False  # no proxy variables or .netrc read for each request
        made[role].cookies.set_policy(_NoCookies())
    yield made
    for session in made.values():
        session.close()


def _spares_the_fuzzers_own_credentials(case) -> bool:
    """The fuzzer must not lock itself out: no change to its own accounts."""
    username = case.path_parameters.get("username") if case.path_parameters else None
    return username not in FUZZ_USERS or case.method == "GET"


def _holds(case, role, fuzz_server, sessions) -> None:
    server, headers = fuzz_server
    operation_id = case.operation.definition.raw["operationId"]
    assume(_spares_the_fuzzers_own_credentials(case))
    allowed = RANK[role] >= RANK[POLICY[operation_id]]
    response = case.call(
        base_url=server.url, session=sessions[role], headers=headers[role], timeout=30
    )
    if response.status_code == 400 and response.text == "Invalid HTTP request received.":
        # Not an HTTP message uvicorn can read (a made-up `transfer-encoding`, say): refused
        # by the server before any of the service's code, in uvicorn's own plain text.
        return
    probing_methods = case.method.upper() != case.operation.method.upper()  # expects a 405
    if not allowed and not probing_methods:
        # Refused before the route ran: a body too large, not JSON, not valid Unicode, a
        # NUL byte in the path or query.
        refused_early = response.status_code in (413, 422) or (
            response.status_code == 400
            and any(
                said in response.text
                for said in ("surrogate", "error parsing the body", "with a NUL byte")
            )
        )
        assert response.status_code in (401, 403) or refused_early, (
            role,
            operation_id,
            response.status_code,
            response.text[:300],
        )
        return
    case.validate_response(response, headers=headers[role])


def _fuzzed(role: str | None, refused: bool):
    """The fuzz test of `role` over the operations it may use (every phase, `EXAMPLES`
    each), or over those it may not (`REFUSED_EXAMPLES` each, without the coverage
    phase's boundary values and method probes, which the roles that may use the operation
    run: what is checked is that any input is refused, and refusing does not depend on
    the input)."""
    operations = sorted(
        op
        for op, least in POLICY.items()
        if op not in NOT_FUZZED and (RANK[role] < RANK[least]) == refused
    )
    schema = (REFUSED_SCHEMA if refused else SCHEMA).include(operation_id=operations)

    @pytest.mark.docker
    @schema.parametrize()
    @settings(
        max_examples=REFUSED_EXAMPLES if refused else EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def test(case, fuzz_server, sessions):
        _holds(case, role, fuzz_server, sessions)

    return test


test_admin_under_fuzzing = _fuzzed("admin", refused=False)
test_operator_under_fuzzing = _fuzzed("operator", refused=False)
test_viewer_under_fuzzing = _fuzzed("viewer", refused=False)
test_anonymous_under_fuzzing = _fuzzed(None, refused=False)
test_operator_is_refused_under_fuzzing = _fuzzed("operator", refused=True)
test_viewer_is_refused_under_fuzzing = _fuzzed("viewer", refused=True)
test_anonymous_is_refused_under_fuzzing = _fuzzed(None, refused=True)
