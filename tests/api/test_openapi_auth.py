"""Every /api route needs a signed-in user, except health, the ways to sign in, the
git hosts' webhooks (checked by their signature: tests/git/test_sync.py) and an agent's
enrolment (its one-time token: tests/agents/test_tunnel.py)."""

from fastapi.testclient import TestClient

PUBLIC = {
    ("get", "/api/health"),
    ("post", "/api/auth/login"),
    ("get", "/api/auth/sign-in-options"),
    ("get", "/api/auth/oidc/start"),
    ("get", "/api/auth/oidc/callback"),
    ("post", "/api/git/hooks/{repo_id}"),
    ("post", "/api/git/hooks/agents/{agent_id}/{repo_id}"),
    ("post", "/api/enrol"),
}


def _operations(app):
    for path, item in app.openapi()["paths"].items():
        for method in item:
            yield method, path


def test_every_other_route_answers_401_without_credentials(app, client: TestClient):
    operations = set(_operations(app))
    assert len(operations) > 10
    assert operations >= PUBLIC
    for method, path in sorted(operations - PUBLIC):
        concrete = path.replace("{token_id}", "1").replace("{username}", "admin")
        response = client.request(method.upper(), concrete, json={})
        assert response.status_code == 401, (method, path, response.text)
        assert response.json()["detail"]


def test_schema_and_docs_need_sign_in(client: TestClient, admin_client: TestClient):
    for path in ("/api/openapi.json", "/api/docs"):
        assert client.get(path).status_code == 401
        assert admin_client.get(path).status_code == 200
    assert admin_client.get("/api/openapi.json").json()["info"]["title"] == "Stackyard"
    assert "/docs-assets/swagger-ui-bundle.js" in admin_client.get("/api/docs").text
    assert admin_client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200


def test_public_routes_answer_without_credentials(client: TestClient):
    assert client.get("/api/health").status_code == 200
    assert (
        client.post("/api/auth/login", json={"username": "x", "password": "y"}).status_code == 401
    )
    options = client.get("/api/auth/sign-in-options")
    assert options.json() == {"provider": None, "password_sign_in": "everyone"}
    # With no provider set up, its way in says so on the sign-in page.
    start = client.get("/api/auth/oidc/start", follow_redirects=False)
    assert start.status_code == 303
    assert start.headers["location"] == "/login?error=not_set_up"
