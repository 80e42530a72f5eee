import logging
import re

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from stackyard.errors import Conflict


def _add_route(app, path, endpoint) -> None:
    """Adds a route ahead of the UI's catch-all route."""
    app.add_api_route(path, endpoint)
    app.router.routes.insert(0, app.router.routes.pop())


def test_validation_errors_are_a_detail_text(admin_client: TestClient):
    response = admin_client.post("/api/users", json={"password": 5})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    assert "username: Field required" in detail and "password:" in detail


def test_unknown_routes_and_methods_are_json(admin_client: TestClient):
    missing = admin_client.get("/api/does-not-exist")
    assert missing.status_code == 404 and missing.json() == {
        "detail": "No route /api/does-not-exist"
    }
    wrong_method = admin_client.patch("/api/health")
    assert wrong_method.status_code == 405 and wrong_method.json() == {
        "detail": "Method Not Allowed"
    }
    assert wrong_method.headers["Allow"] == "GET"
    for method, path in [("post", "/api/audit"), ("put", "/api/auth/me")]:
        response = admin_client.request(method.upper(), path)
        assert response.status_code == 405, (method, path)
        assert "GET" in response.headers["Allow"]


def test_documented_422_is_the_detail_shape(app):
    """Validation errors are documented as they are sent: {"detail": "..."}."""
    schema = app.openapi()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation["responses"].get("422")
            if body is None:
                continue
            ref = body["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorBody"), (method, path, ref)


def test_typed_errors_map_to_their_status(app, admin_client: TestClient):
    def busy():
        raise Conflict("Stack 'web' is busy")

    _add_route(app, "/api/test-conflict", busy)
    response = admin_client.get("/api/test-conflict")
    assert response.status_code == 409 and response.json() == {"detail": "Stack 'web' is busy"}


def test_unexpected_failure_is_logged_with_traceback_and_hidden_from_the_client(
    app, settings, admin_client: TestClient, caplog
):
    def explode():
        raise RuntimeError(f"boom with {settings.secret_key}")

    _add_route(app, "/api/test-explode", explode)
    with caplog.at_level(logging.ERROR, logger="stackyard.api"):
        response = admin_client.get("/api/test-explode")
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal server error"}
    assert settings.secret_key not in response.text and "Traceback" not in response.text
    record = next(r for r in caplog.records if r.name == "stackyard.api")
    assert "GET /api/test-explode" in record.getMessage()
    assert record.exc_info and record.exc_info[0] is RuntimeError


def test_responses_carry_security_headers(client: TestClient):
    headers = client.get("/api/health").headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def _with_nul(path: str) -> str:
    return re.sub(r"\{([^}:]+)(:[^}]+)?\}", "x%00y", path)


def test_a_nul_byte_in_any_path_or_query_is_a_400(app, admin_client: TestClient):
    """Every route with a path parameter (stack ids, run keys, agents' transfers), and
    any query: refused before a route sees it, never a 500 (`embedded null byte`)."""
    routes = [
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if "{" in path
        for method in operations
    ]
    assert len(routes) > 50
    for method, path in routes:
        answer = admin_client.request(method, _with_nul(path))
        assert answer.status_code == 400, (method, path, answer.text)
        assert "NUL" in answer.json()["detail"]
    for query in ("path=a%00b", "tail=1&service=%00"):
        answer = admin_client.get(f"/api/stacks?{query}")
        assert answer.status_code == 400 and "NUL" in answer.json()["detail"], query
    shell = "/api/stacks/x%00/containers/c/shell"
    with pytest.raises(WebSocketDisconnect), admin_client.websocket_connect(shell):
        pass
