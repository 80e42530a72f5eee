def test_registry_credentials_are_admin_only_audited_and_never_returned(
    admin_client, user_client, settings
):
    body = {"registry": "ghcr.io", "username": "bot", "password": "very-secret-pass"}
    assert user_client.put("/api/registries", json=body).status_code == 403
    assert user_client.get("/api/registries").status_code == 403
    saved = admin_client.put("/api/registries", json=body)
    assert saved.status_code == 200 and saved.json() == {"registry": "ghcr.io", "username": "bot"}
    listed = admin_client.get("/api/registries")
    assert listed.json() == [{"registry": "ghcr.io", "username": "bot"}]
    assert "very-secret-pass" not in listed.text
    files = b"".join(p.read_bytes() for p in settings.data_dir.rglob("*") if p.is_file())
    assert b"very-secret-pass" not in files
    assert admin_client.delete("/api/registries/ghcr.io").status_code == 204
    assert admin_client.delete("/api/registries/ghcr.io").status_code == 404
    actions = [(e["action"], e["outcome"]) for e in admin_client.get("/api/audit").json()["items"]]
    assert actions[:3] == [
        ("registry.delete", "failure"),
        ("registry.delete", "success"),
        ("registry.set", "success"),
    ]
