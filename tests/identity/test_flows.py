"""Sign-ins waiting at the provider: one client beginning many pushes out only its own."""

import pytest

from stackyard.errors import Invalid
from stackyard.identity.flows import PendingFlows


def test_an_address_keeps_at_most_its_share_and_loses_its_own_oldest_first():
    flows = PendingFlows(per_source=3, max_pending=100)
    victim = flows.begin("/", "cb", "10.0.0.1")
    mine = [flows.begin("/", "cb", "10.0.0.2") for _ in range(5)]
    assert flows.take(victim.state, victim.state) is victim
    for gone in mine[:2]:
        with pytest.raises(Invalid, match="expired or was finished"):
            flows.take(gone.state, gone.state)
    assert [flows.take(f.state, f.state) for f in mine[2:]] == mine[2:]


def test_when_all_are_full_the_busiest_address_gives_way():
    """Many addresses (an IPv6 /64 counts as one), each at its share: the total bound
    takes from whoever holds the most, never from a browser with one sign-in."""
    flows = PendingFlows(per_source=4, max_pending=10)
    victim = flows.begin("/", "cb", "192.0.2.7")
    for n in range(30):
        flows.begin("/", "cb", f"2001:db8:0:{n % 3}::{n}")
    assert flows.take(victim.state, victim.state) is victim
