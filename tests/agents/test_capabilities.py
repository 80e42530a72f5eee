"""The capabilities an agent serves: one Literal type, served as such and read as such."""

import pytest
from pydantic import ValidationError

from stackyard.agents.compat import CAPABILITIES
from stackyard.agents.health import AgentHealth, own_health


def test_an_agent_serves_every_capability_of_its_version():
    assert own_health("1.2.3").capabilities == list(CAPABILITIES)


def test_a_newer_agents_capability_this_central_does_not_know_is_left_out():
    health = AgentHealth.model_validate(
        {"version": "1.3.0", "capabilities": ["stacks", "gpu", "files"]}
    )
    assert health.capabilities == ["stacks", "files"]


def test_capabilities_that_are_not_a_list_are_refused():
    with pytest.raises(ValidationError):
        AgentHealth.model_validate({"version": "1.3.0", "capabilities": "stacks"})
