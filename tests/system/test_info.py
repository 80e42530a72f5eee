import dataclasses

import pytest

pytestmark = pytest.mark.docker


def test_system_info_reports_the_real_engine_and_compose(admin_client, docker_client, stacks_dir):
    info = admin_client.get("/api/system/info").json()
    assert info["docker"]["reachable"] is True
    assert info["docker"]["version"] == docker_client.version()["Version"]
    assert info["compose"]["version"]
    assert info["compose"]["json_progress"] is True  # the setup script installs compose >= 2.29
    assert info["stacks_dir"] == str(stacks_dir.resolve())


def test_unreachable_engine_is_reported_not_raised(app, admin_client, tmp_path):
    started = app.state.services
    app.state.services = dataclasses.replace(
        started,
        settings=started.settings.model_copy(
            update={"docker_host": f"unix://{tmp_path}/no-such.sock"}
        ),
    )
    info = admin_client.get("/api/system/info").json()
    assert info["docker"]["reachable"] is False
    assert "Cannot reach the Docker engine" in info["docker"]["error"]
