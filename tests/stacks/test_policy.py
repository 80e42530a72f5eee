"""Update policies through the API: a stack's own and the host's default, who may set
them, bad input refused with its detail and nothing changed, the audit log."""

from __future__ import annotations

import pytest

from tests.stacks.test_updates import summary_of
from tests.support.stacks import compose_text, service

pytestmark = pytest.mark.docker


def policy_of(client, stack_id: str) -> tuple[dict, bool]:
    line = summary_of(client, stack_id)
    return line["policy"], line["policy_inherited"]


def test_a_stack_follows_the_default_until_it_has_its_own(admin_client, user_client, make_stack):
    stack_id = make_stack("pol", compose_text(web=service()))
    default, inherited = policy_of(admin_client, stack_id)
    assert inherited is True
    assert default == admin_client.get("/api/stacks/update-policy").json()
    assert (default["mode"], default["track"], default["health_timeout"], default["settle"]) == (
        "notify",
        "digest",
        120,
        30,
    )

    own = {"mode": "auto", "track": "minor", "settle": 10, "window": "daily"}
    assert user_client.put(f"/api/stacks/{stack_id}/update-policy", json=own).status_code == 204
    policy, inherited = policy_of(admin_client, stack_id)
    assert inherited is False and policy["window"] == "0 3 * * *"  # the preset, spelled out
    assert (policy["mode"], policy["track"], policy["settle"]) == ("auto", "minor", 10)
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["auto_update"] is True

    changed = admin_client.put("/api/stacks/update-policy", json={"mode": "off"})
    assert changed.status_code == 204
    assert policy_of(admin_client, stack_id)[0]["mode"] == "auto"  # its own stays
    assert user_client.delete(f"/api/stacks/{stack_id}/update-policy").status_code == 204
    policy, inherited = policy_of(admin_client, stack_id)
    assert (policy["mode"], inherited) == ("off", True)
    assert summary_of(admin_client, stack_id)["has_update"] is False
    admin_client.put("/api/stacks/update-policy", json={})  # back to the built-in one

    audit = admin_client.get("/api/audit", params={"action": "stack.update_policy"}).json()
    targets = [
        (e["actor"], e["target"]) for e in audit["items"] if e["action"] == "stack.update_policy"
    ]
    assert ("alice", stack_id) in targets and ("admin", "*") in targets


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"mode": "sometimes"}, "mode"),
        ({"settle": 200, "health_timeout": 100}, "settle (200 s) must be shorter"),
        ({"window": "every tuesday"}, "is not a cron expression"),
        ({"window": "0 0 31 2 *"}, "it would never come"),
        ({"window": "0 0 30 2 *", "timezone": "Europe/Berlin"}, "names no time within 8 years"),
        ({"timezone": "Mars/Olympus"}, "is not a time zone"),
        ({"cooldown_hours": -1}, "cooldown_hours"),
        ({"mode": "auto", "surprise": 1}, "surprise"),
    ],
)
def test_a_bad_policy_is_refused_with_its_detail_and_changes_nothing(
    admin_client, make_stack, body, detail
):
    stack_id = make_stack("bad", compose_text(web=service()))
    before = policy_of(admin_client, stack_id)
    answer = admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=body)
    assert answer.status_code in (400, 422) and detail in answer.json()["detail"]
    assert policy_of(admin_client, stack_id) == before


def test_viewers_read_policies_and_only_admins_set_the_default(
    viewer_client, user_client, make_stack
):
    stack_id = make_stack("who", compose_text(web=service()))
    assert viewer_client.get("/api/stacks/update-policy").status_code == 200
    assert viewer_client.put(f"/api/stacks/{stack_id}/update-policy", json={}).status_code == 403
    assert viewer_client.delete(f"/api/stacks/{stack_id}/update-policy").status_code == 403
    assert user_client.put("/api/stacks/update-policy", json={}).status_code == 403


def test_a_default_window_that_never_comes_is_refused(admin_client):
    before = admin_client.get("/api/stacks/update-policy").json()
    answer = admin_client.put("/api/stacks/update-policy", json={"window": "0 0 31 2 *"})
    assert answer.status_code == 400 and "never come" in answer.json()["detail"]
    assert admin_client.get("/api/stacks/update-policy").json() == before
    leap = admin_client.put("/api/stacks/update-policy", json={"window": "0 0 29 2 *"})
    assert leap.status_code == 204  # 29 February comes, every four years
    admin_client.put("/api/stacks/update-policy", json={})
