"""The role a provider's claims give (pure logic; the sign-ins are in
test_provider_sign_in.py)."""

import pytest

from stackyard.auth.principal import Role
from stackyard.errors import Forbidden
from stackyard.identity.accounts import claim_values, role_of
from stackyard.identity.config import ProviderConfig, RoleRule

CONFIG = ProviderConfig(
    name="Corp",
    roles=[
        RoleRule(value="admins", role=Role.admin),
        RoleRule(value="ops", role=Role.operator),
    ],
)


def test_claims_are_read_as_lists_single_values_or_nested_paths():
    assert claim_values({"groups": ["a", 1, "b"]}, "groups") == ["a", "b"]
    assert claim_values({"groups": "a"}, "groups") == ["a"]
    nested = {"realm_access": {"roles": ["ops"]}}
    assert claim_values(nested, "realm_access.roles") == ["ops"]
    assert claim_values({"realm_access": "x"}, "realm_access.roles") == []
    assert claim_values({}, "groups") == []


def test_the_highest_mapped_role_wins_and_the_rest_is_refused_or_defaulted():
    assert role_of({"groups": ["ops", "admins"]}, CONFIG) is Role.admin
    assert role_of({"groups": ["ops", "other"]}, CONFIG) is Role.operator
    assert role_of({"groups": "Admins"}, CONFIG.model_copy(update={"default_role": "viewer"})) is (
        Role.viewer  # group names are compared exactly
    )
    with pytest.raises(Forbidden, match="in no group that has a role here"):
        role_of({"groups": ["other"]}, CONFIG)


def test_entra_ids_group_overage_is_said_plainly():
    overage = {"_claim_names": {"groups": "src1"}, "_claim_sources": {"src1": {}}}
    with pytest.raises(Forbidden, match="overage"):
        role_of(overage, CONFIG)
    with pytest.raises(Forbidden, match="overage"):
        role_of({"hasgroups": True}, CONFIG)
