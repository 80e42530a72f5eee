"""The data folder (database, secret key, caches) is readable by its owner only."""

import stat

from tests.support.service import settings_in, started


def test_database_and_data_folder_are_private(central_app, tmp_path):
    settings = settings_in(tmp_path, secret_key=None)  # generated into the data folder
    with started(central_app, settings) as client:
        assert (
            client.post(
                "/api/auth/login", json={"username": "admin", "password": settings.admin_password}
            ).status_code
            == 200
        )
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"stackyard.db", "secret_key"}
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_an_existing_world_readable_database_is_made_private(central_app, tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "stackyard.db").touch(mode=0o644)
    with started(central_app, settings_in(tmp_path)):
        pass
    assert stat.S_IMODE((data / "stackyard.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
