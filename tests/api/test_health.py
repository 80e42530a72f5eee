from fastapi.testclient import TestClient

from stackyard import __version__
from tests.support.service import started


def test_health_reports_the_version_without_sign_in(client: TestClient):
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__, "mode": "central"}


def test_app_version_setting_is_what_health_reports(central_app, settings):
    with started(central_app, settings.model_copy(update={"app_version": "9.8.7"})) as client:
        assert client.get("/api/health").json()["version"] == "9.8.7"
