import pytest

from stackyard.auth.passwords import hash_password, verify_password
from stackyard.errors import Invalid


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
