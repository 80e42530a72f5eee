"""`docker run` commands as compose files: a table of real commands (from the READMEs of
the images users run most) and the compose file each must become, each also accepted by
the real `docker compose config`; then what cannot be converted, and the API."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from stackyard.compose.dockerrun import convert
from stackyard.errors import Invalid

CASES: list[tuple[str, str, dict]] = [
    (
        "portainer: ports, the socket, a named volume",
        "docker run -d -p 8000:8000 -p 9443:9443 --name portainer --restart=always "
        "-v /var/run/docker.sock:/var/run/docker.sock -v portainer_data:/data "
        "portainer/portainer-ce:2.21.4",
        {
            "services": {
                "portainer": {
                    "image": "portainer/portainer-ce:2.21.4",
                    "restart": "always",
                    "ports": ["8000:8000", "9443:9443"],
                    "volumes": [
                        "/var/run/docker.sock:/var/run/docker.sock",
                        "portainer_data:/data",
                    ],
                }
            },
            "volumes": {"portainer_data": {}},
        },
    ),
    (
        "home assistant: host network, privileged, read-only bind",
        "docker run -d --name homeassistant --privileged --restart=unless-stopped "
        "-e TZ=Europe/Berlin -v /srv/ha:/config -v /run/dbus:/run/dbus:ro --network=host "
        "ghcr.io/home-assistant/home-assistant:stable",
        {
            "services": {
                "homeassistant": {
                    "image": "ghcr.io/home-assistant/home-assistant:stable",
                    "restart": "unless-stopped",
                    "privileged": True,
                    "volumes": ["/srv/ha:/config", "/run/dbus:/run/dbus:ro"],
                    "environment": ["TZ=Europe/Berlin"],
                    "network_mode": "host",
                }
            }
        },
    ),
    (
        "wireguard: caps, a device, a sysctl, udp, continued lines",
        r"""docker run -d \
  --name=wireguard \
  --cap-add=NET_ADMIN \
  --cap-add=SYS_MODULE \
  -e PUID=1000 -e PGID=1000 \
  -p 51820:51820/udp \
  -v ./config:/config \
  --sysctl="net.ipv4.conf.all.src_valid_mark=1" \
  --device /dev/net/tun:/dev/net/tun \
  --restart unless-stopped \
  lscr.io/linuxserver/wireguard:latest
""",
        {
            "services": {
                "wireguard": {
                    "image": "lscr.io/linuxserver/wireguard:latest",
                    "restart": "unless-stopped",
                    "ports": ["51820:51820/udp"],
                    "cap_add": ["NET_ADMIN", "SYS_MODULE"],
                    "devices": ["/dev/net/tun:/dev/net/tun"],
                    "volumes": ["./config:/config"],
                    "environment": ["PUID=1000", "PGID=1000"],
                    "sysctls": {"net.ipv4.conf.all.src_valid_mark": "1"},
                }
            }
        },
    ),
    (
        "a web server behind a proxy: its network, an alias, labels, a healthcheck",
        "docker run -d --name web --network proxy --network-alias www "
        "-l traefik.enable=true -l 'traefik.http.routers.web.rule=Host(`example.com`)' "
        "--health-cmd 'wget -qO- http://localhost/ || exit 1' --health-interval 30s "
        "--health-timeout 5s --health-retries 3 --health-start-period 10s nginx:1.27",
        {
            "services": {
                "web": {
                    "image": "nginx:1.27",
                    "labels": [
                        "traefik.enable=true",
                        "traefik.http.routers.web.rule=Host(`example.com`)",
                    ],
                    "healthcheck": {
                        "test": ["CMD-SHELL", "wget -qO- http://localhost/ || exit 1"],
                        "interval": "30s",
                        "timeout": "5s",
                        "start_period": "10s",
                        "retries": 3,
                    },
                    "networks": {"proxy": {"aliases": ["www"]}},
                }
            },
            "networks": {"proxy": {"external": True}},
        },
    ),
    (
        "jellyfin: a user, a GPU, a device, a read-only mount, no name",
        "docker run -d --user 1000:1000 --gpus all --device /dev/dri:/dev/dri "
        "--mount type=bind,source=/srv/media,target=/media,readonly "
        "--mount type=volume,source=jellyfin-cache,target=/cache "
        "-p 127.0.0.1:8096:8096 jellyfin/jellyfin:10.10",
        {
            "services": {
                "jellyfin": {
                    "image": "jellyfin/jellyfin:10.10",
                    "user": "1000:1000",
                    "ports": ["127.0.0.1:8096:8096"],
                    "devices": ["/dev/dri:/dev/dri"],
                    "volumes": [
                        {
                            "type": "bind",
                            "source": "/srv/media",
                            "target": "/media",
                            "read_only": True,
                        },
                        {"type": "volume", "source": "jellyfin-cache", "target": "/cache"},
                    ],
                    "deploy": {
                        "resources": {
                            "reservations": {
                                "devices": [
                                    {"driver": "nvidia", "capabilities": ["gpu"], "count": "all"}
                                ]
                            }
                        }
                    },
                }
            },
            "volumes": {"jellyfin-cache": {}},
        },
    ),
    (
        "postgres: an env file, shared memory, limits, a stop timeout",
        "docker run -d --name db --env-file ./db.env --shm-size=256m "
        "--ulimit nofile=65536:65536 --stop-timeout 60 -e POSTGRES_PASSWORD=secret "
        "-v pgdata:/var/lib/postgresql/data postgres:16",
        {
            "services": {
                "db": {
                    "image": "postgres:16",
                    "shm_size": "256m",
                    "stop_grace_period": "60s",
                    "env_file": ["./db.env"],
                    "volumes": ["pgdata:/var/lib/postgresql/data"],
                    "environment": ["POSTGRES_PASSWORD=secret"],
                    "ulimits": {"nofile": {"soft": 65536, "hard": 65536}},
                }
            },
            "volumes": {"pgdata": {}},
        },
    ),
    (
        "redis: a command, logging, memory and cpus, no healthcheck",
        "docker container run --no-healthcheck --log-driver json-file --log-opt max-size=10m "
        "--log-opt max-file=3 --memory 512m --cpus 1.5 redis:7 redis-server --appendonly yes",
        {
            "services": {
                "redis": {
                    "image": "redis:7",
                    "mem_limit": "512m",
                    "command": ["redis-server", "--appendonly", "yes"],
                    "cpus": "1.5",
                    "healthcheck": {"disable": True},
                    "logging": {
                        "driver": "json-file",
                        "options": {"max-size": "10m", "max-file": "3"},
                    },
                }
            }
        },
    ),
    (
        "a shell in the current folder: -it, an entrypoint, $PWD",
        'sudo docker run --rm -it -w /work -v "$PWD":/work --entrypoint sh alpine:3.20 '
        "-c 'echo hi'",
        {
            "services": {
                "alpine": {
                    "image": "alpine:3.20",
                    "working_dir": "/work",
                    "entrypoint": ["sh"],
                    "command": ["-c", "echo hi"],
                    "stdin_open": True,
                    "tty": True,
                    "volumes": [".:/work"],
                }
            }
        },
    ),
    (
        "a pihole: extra hosts, DNS, a hostname, both protocols",
        "docker run -d --name pihole -h pihole --dns 127.0.0.1 --dns 1.1.1.1 "
        "--add-host host.docker.internal:host-gateway -p 53:53/tcp -p 53:53/udp "
        "-e 'FTLCONF_webserver_api_password=correct horse' --cap-add NET_ADMIN "
        "--restart unless-stopped pihole/pihole:2024.07.0",
        {
            "services": {
                "pihole": {
                    "image": "pihole/pihole:2024.07.0",
                    "hostname": "pihole",
                    "restart": "unless-stopped",
                    "ports": ["53:53/tcp", "53:53/udp"],
                    "cap_add": ["NET_ADMIN"],
                    "dns": ["127.0.0.1", "1.1.1.1"],
                    "extra_hosts": ["host.docker.internal:host-gateway"],
                    "environment": ["FTLCONF_webserver_api_password=correct horse"],
                }
            }
        },
    ),
]


@pytest.mark.parametrize(("command", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_docker_run_command_becomes_the_compose_file_it_means(command, expected, tmp_path):
    converted = convert(command)
    assert yaml.safe_load(converted.compose) == expected
    assert converted.service == next(iter(expected["services"]))
    # Compose itself reads it as a valid project.
    (tmp_path / "compose.yaml").write_text(converted.compose)
    (tmp_path / "db.env").write_text("POSTGRES_USER=app\n")
    checked = subprocess.run(
        ["docker", "compose", "config", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr


def test_what_compose_does_anyway_is_dropped_and_said():
    converted = convert("docker run -d --rm -P nginx:1.27")
    assert yaml.safe_load(converted.compose) == {"services": {"nginx": {"image": "nginx:1.27"}}}
    assert [note.split(":")[0] for note in converted.notes] == [
        "-d/--detach",
        "--rm",
        "-P/--publish-all",
    ]


def test_a_name_that_needs_quoting_in_yaml_stays_a_string():
    converted = convert("docker run -p 22:22 -e ON=yes -l 'x=1:2' image")
    service = yaml.safe_load(converted.compose)["services"]["image"]
    assert service["ports"] == ["22:22"]  # not 1342, YAML 1.1's base 60
    assert service["environment"] == ["ON=yes"]


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("docker run --bogus 1 nginx", "unrecognized arguments: --bogus"),
        ("docker run -d", "the following arguments are required: image"),
        ("", "it has no image"),
        ("docker run -e 'unclosed nginx", "No closing quotation"),
        ("docker run --network-alias web nginx", "need --network"),
        ("docker run --network host --ip 10.0.0.2 nginx", "need --network"),
        ("docker run --ulimit nofile=many nginx", "is not a whole number"),
        ("docker run --sysctl novalue nginx", "is not NAME=VALUE"),
        ("docker run --mount type=bind,source=/a nginx", "has no target"),
        ("docker run --mount type=bind,src=/a,dst=/b,bind-propagation=shared nginx", "cannot be"),
        ("docker run -p", "expected one argument"),
    ],
)
def test_what_cannot_be_converted_is_refused_with_why(command, says):
    with pytest.raises(Invalid) as refused:
        convert(command)
    assert says in refused.value.detail


def test_the_api_converts_for_admins_only(admin_client, user_client):
    command = {"command": "docker run -d --name app -p 8080:80 nginx:1.27"}
    answer = admin_client.post("/api/stacks/convert", json=command)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["service"] == "app" and body["notes"] == [
        "-d/--detach: compose starts services in the background",
        "--name: 'app' names the stack and its service; compose names the container <stack>-app-1",
    ]
    assert "container_name" not in body["compose"]
    assert yaml.safe_load(body["compose"])["services"]["app"]["ports"] == ["8080:80"]
    assert admin_client.get("/api/stacks").json() == []  # nothing made
    refused = admin_client.post("/api/stacks/convert", json={"command": "docker run --x y"})
    assert refused.status_code == 400 and "--x" in refused.json()["detail"]
    assert user_client.post("/api/stacks/convert", json=command).status_code == 403


def test_what_gives_the_container_the_host_is_converted_and_named_in_a_warning():
    """Root on the host, as the command meant it: converted as it is, but each option is
    named with what it gives, since the compose file alone does not say so."""
    converted = convert(
        "docker run --privileged --pid=host --net host --ipc=host -v /:/host --cap-add ALL "
        "--cap-add sys_admin --cap-add NET_BIND_SERVICE "
        "-v /var/run/docker.sock:/var/run/docker.sock:ro "
        "--mount type=bind,source=/etc,target=/host-etc,readonly --device /dev/sda "
        "--security-opt seccomp=unconfined -v ./data:/data -v data:/cache alpine"
    )
    service = yaml.safe_load(converted.compose)["services"]["alpine"]
    assert service["privileged"] is True and service["pid"] == "host"
    assert [w.split(": ", 1)[0] for w in converted.warnings] == [
        "--privileged",
        "--pid host",
        "--network host",
        "--ipc host",
        "--cap-add ALL",
        "--cap-add sys_admin",
        "-v /:/host",
        "-v /var/run/docker.sock:/var/run/docker.sock:ro",
        "--mount type=bind,source=/etc,target=/host-etc,readonly",
        "--device /dev/sda",
        "--security-opt seccomp=unconfined",
    ]
    assert "root on it" in converted.warnings[0]
    assert "reads and writes it" in converted.warnings[6]
    assert "controls Docker" in converted.warnings[7]
    assert "the container reads it" in converted.warnings[8]
    plain = convert("docker run -d -p 8080:80 -v ./site:/usr/share/nginx/html:ro nginx:1.27")
    assert plain.warnings == []


def test_the_api_answers_the_warnings_with_the_compose_file(admin_client):
    command = {"command": "docker run --privileged --pid=host -v /:/host --cap-add ALL alpine"}
    answer = admin_client.post("/api/stacks/convert", json=command)
    assert answer.status_code == 200, answer.text
    warnings = answer.json()["warnings"]
    assert [w.split(":", 1)[0] for w in warnings] == [
        "--privileged",
        "--pid host",
        "--cap-add ALL",
        "-v /",
    ]
