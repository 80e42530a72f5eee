import pytest
from sqlalchemy import select

from stackyard.auth.passwords import hash_password, verify_password
from stackyard.db.models import User
from stackyard.errors import Invalid
from tests.support.service import settings_in, started


def test_argon2id_hash_verifies_only_the_right_password():
    hashed = hash_password("a good passphrase")
    assert hashed.startswith("$argon2id$")
    assert "a good passphrase" not in hashed
    assert verify_password(hashed, "a good passphrase")
    assert not verify_password(hashed, "a good passphrasE")
    assert not verify_password(None, "a good passphrase")
    assert not verify_password("not-a-hash", "a good passphrase")


def test_short_passwords_are_refused():
    with pytest.raises(Invalid, match="at least 8 characters"):
        hash_password("short")


@pytest.mark.parametrize(
    ("cheap", "cost"), [(False, "m=65536,t=3,p=4"), (True, "m=8,t=1,p=1")], ids=["default", "tests"]
)
def test_the_first_admin_is_hashed_at_rfc_9106_cost_unless_the_tests_ask(
    central_app, tmp_path, cheap, cost
):
    """The production default is argon2-cffi's (RFC 9106's low-memory profile); the
    test suite's setting lowers it to the least Argon2id allows."""
    settings = settings_in(tmp_path, test_cheap_password_hashes=cheap)
    with started(central_app, settings), central_app.state.services.db.session() as session:
        stored = session.scalars(select(User.password_hash)).one()
    assert stored.startswith(f"$argon2id$v=19${cost}$")
    assert verify_password(stored, settings.admin_password)
