"""The data folder (database, secret key, caches) is readable by its owner only."""

import stat

from fastapi.testclient import TestClient

from stackyard.app import create_app
from stackyard.settings import Settings


def test_database_and_data_folder_are_private(tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data",
        stacks_dir=tmp_path / "stacks",
        admin_password="admin-password-1",
        update_check_interval=0,
    )
    with TestClient(create_app(settings)) as client:
        assert (
            client.post(
                "/api/auth/login", json={"username": "admin", "password": "admin-password-1"}
            ).status_code
            == 200
        )
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"stackyard.db", "secret_key"}
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_an_existing_world_readable_database_is_made_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "stackyard.db").touch(mode=0o644)
    settings = Settings(
        data_dir=data, stacks_dir=tmp_path / "stacks", secret_key="k" * 48, update_check_interval=0
    )
    with TestClient(create_app(settings)):
        pass
    assert stat.S_IMODE((data / "stackyard.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
