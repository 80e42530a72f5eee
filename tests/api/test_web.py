from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.api import errors
from stackyard.api.web import WEB_DIR, mount_ui


def _ui_app(web_dir) -> TestClient:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)  # as the service
    errors.install(app)
    mount_ui(app, web_dir)
    return TestClient(app)


def test_ui_is_served_with_client_side_routes_falling_back_to_index(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path / "index.html").write_text("<div id=root></div>")
    (tmp_path.parent / "secret.txt").write_text("outside")
    client = _ui_app(tmp_path)
    assert client.get("/").text == "<div id=root></div>"
    assert client.get("/stacks/web").text == "<div id=root></div>"
    assert client.get("/assets/app.js").text == "console.log(1)"
    assert "outside" not in client.get("/../secret.txt").text
    assert "outside" not in client.get("/%2e%2e/secret.txt").text
    api = client.get("/api/unknown")
    assert api.status_code == 404 and api.json() == {"detail": "No route /api/unknown"}
    for elsewhere in ("/openapi.json", "/docs", "/redoc"):  # other services' places
        answer = client.get(elsewhere)
        assert answer.status_code == 404 and answer.json()["detail"], elsewhere


def test_missing_build_is_a_clear_error(tmp_path):
    response = _ui_app(tmp_path).get("/")
    assert response.status_code == 503
    assert "not built" in response.json()["detail"]


def test_the_package_ships_the_built_ui():
    """The setup script builds web/ into the package; the service serves that build."""
    assert (WEB_DIR / "index.html").is_file(), "run scripts/setup.sh to build the UI"
    assert any((WEB_DIR / "assets").glob("*.js"))
