"""The drill's clone configuration (pure): nothing of the original's reachable from it."""

from __future__ import annotations

from stackyard.backups.contents import contents, differences
from stackyard.backups.drill import isolated

ROOTS = ["/stacks/.stackyard-drills/p/stack", "/stacks/.stackyard-drills/p/binds"]
PROJECT = "stackyard-drill-abc"


def config() -> dict:
    return {
        "name": "web",
        "networks": {"default": {"name": "web_default"}, "shared": {"external": True}},
        "volumes": {
            "db": {"name": f"{PROJECT}_db"},
            "cache": {"name": "web_cache"},
            "media": {"name": "media", "external": True},
            "nfs": {"name": "web_nfs", "driver_opts": {"type": "nfs", "o": "addr=10.0.0.9"}},
        },
        "secrets": {
            "inside": {"file": f"{ROOTS[0]}/secret.txt"},
            "host": {"file": "/etc/ssl/private/key.pem"},
        },
        "services": {
            "app": {
                "image": "nginx:1",
                "container_name": "web-app",
                "ports": [{"target": 80, "published": "8080"}],
                "networks": {"default": None, "shared": None},
                "restart": "always",
                "volumes": [
                    {"type": "volume", "source": "db", "target": "/db"},
                    {"type": "bind", "source": f"{ROOTS[1]}/bind-0", "target": "/media"},
                    {"type": "bind", "source": "/var/run/docker.sock", "target": "/sock"},
                    {"type": "bind", "source": "/srv/photos", "target": "/photos"},
                ],
                "secrets": [{"source": "inside"}, {"source": "host"}],
                "volumes_from": ["worker", "container:other"],
            },
            "worker": {"build": {"context": f"{ROOTS[0]}/worker"}, "links": ["app"]},
        },
    }


def test_the_clone_has_no_network_port_name_or_restart():
    made, _ = isolated(config(), PROJECT, "web", ROOTS)
    assert made["name"] == PROJECT and "networks" not in made
    app = made["services"]["app"]
    assert app["network_mode"] == "none" and app["restart"] == "no"
    assert {"ports", "networks", "container_name"} & app.keys() == set()
    assert app["labels"] == {"stackyard.drill": PROJECT}
    worker = made["services"]["worker"]
    assert "build" not in worker and "links" not in worker
    assert worker["image"] == "web-worker"  # the original's built image, not built again


def test_every_volume_is_the_clones_own_and_local():
    made, notes = isolated(config(), PROJECT, "web", ROOTS)
    assert made["volumes"] == {
        "db": {"name": f"{PROJECT}_db"},
        "cache": {"name": f"{PROJECT}_cache"},
        "media": {"name": f"{PROJECT}_media"},  # never the external one
        "nfs": {"name": f"{PROJECT}_nfs"},  # no NFS options: never the share
    }
    assert "volume media: not of the backup, an empty one in the drill" in notes


def test_nothing_outside_the_clones_folders_is_mounted():
    made, notes = isolated(config(), PROJECT, "web", ROOTS)
    app = made["services"]["app"]
    assert [m["source"] for m in app["volumes"]] == ["db", f"{ROOTS[1]}/bind-0"]
    assert app["volumes_from"] == ["worker"]
    assert made["secrets"] == {"inside": {"file": f"{ROOTS[0]}/secret.txt"}}
    assert app["secrets"] == [{"source": "inside"}]
    assert "app: /var/run/docker.sock is not of the backup, not mounted in the drill" in notes
    assert any("/etc/ssl/private/key.pem" in n for n in notes)


def test_a_root_is_matched_whole_never_as_the_start_of_a_longer_name():
    raw = config()
    raw["services"]["app"]["volumes"] = [
        {"type": "bind", "source": f"{ROOTS[1]}-other", "target": "/x"}
    ]
    made, _ = isolated(raw, PROJECT, "web", ROOTS)
    assert made["services"]["app"]["volumes"] == []


def _tar(*entries: tuple[str, bytes | None, int]) -> list[bytes]:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = mode, 1_700_000_000
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return [out.getvalue()]


def test_contents_compare_content_mode_and_presence():
    archive = contents(
        _tar(("data", None, 0o755), ("data/a", b"one", 0o644), ("data/b", b"", 0o600))
    )
    assert (archive.files, archive.bytes) == (2, 3)
    assert differences(archive, archive) == []
    changed = contents(
        _tar(("data", None, 0o755), ("data/a", b"two", 0o640), ("data/c", b"", 0o600))
    )
    assert differences(archive, changed) == [
        "a: its digest, mode differ",
        "b: missing",
        "c: not in the backup",
    ]
