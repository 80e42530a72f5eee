"""A `docker run` command as a compose file, for "New stack": users who move to compose
have commands like these in their notes and READMEs.

The command line is split as a POSIX shell would (`shlex`, line continuations joined) and
read by `argparse` with the options of `docker run` that have a compose equivalent. Options
stop at the image, as in Docker: what follows is the container's command. An option this
converter does not know is refused with its name (guessing would give a stack that does
something else); those that mean nothing in compose (`--rm`, `-d`) are dropped and said so.

Options that hand the container the host (`--privileged`, the host's process or network
namespace, `/` or the Docker socket mounted, `--cap-add ALL`, devices) are converted as
they are, since that is what the command meant, and each is named in a warning: the
compose file alone does not show that a stack made from it is root on the host.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, NoReturn

import yaml
from pydantic import ConfigDict, with_config

from stackyard.errors import Invalid
from stackyard.slugs import slugify

#: Accepted as the start of the command (and dropped).
_PREFIXES = (("sudo",), ("docker", "run"), ("docker", "container", "run"))
#: Options with no meaning in a compose file, and why they are dropped.
_DROPPED = {
    "detach": "-d/--detach: compose starts services in the background",
    "rm": "--rm: compose removes a service's container with `down`",
    "sig_proxy": "--sig-proxy: only for an attached `docker run`",
    "attach": "-a/--attach: only for an attached `docker run`",
}
#: The shell's current folder at the start of a bind mount's source: the stack's folder,
#: where compose runs.
_HERE = re.compile(r"^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=/|:|$)")
#: Networks of Docker's own: a service joins them with `network_mode`.
_MODES = re.compile(r"^(host|none|bridge|default|(container|service):.+)$")


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class Converted:
    compose: str
    service: str
    notes: list[str]  # what was dropped, and why
    #: Each option that gives the container the host (root on it, as a rule), and what it
    #: gives: shown before the stack is made.
    warnings: list[str] = field(default_factory=list)


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key, as compose files are usually written."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit the process
        raise Invalid(f"Not a docker run command this can convert: {message}")


def _parser() -> _Parser:
    parser = _Parser(prog="docker run", add_help=False, allow_abbrev=False)
    for flags in (
        ("-d", "--detach"),
        ("--rm",),
        ("-i", "--interactive"),
        ("-t", "--tty"),
        ("--privileged",),
        ("--init",),
        ("--read-only",),
        ("--no-healthcheck",),
        ("-P", "--publish-all"),
    ):
        parser.add_argument(*flags, action="store_true")
    parser.add_argument("--sig-proxy", nargs="?", const="true")
    for flags in (
        ("--name",),
        ("-h", "--hostname"),
        ("-u", "--user"),
        ("-w", "--workdir"),
        ("--entrypoint",),
        ("--restart",),
        ("--network", "--net"),
        ("-m", "--memory"),
        ("--memory-reservation",),
        ("--memory-swap",),
        ("--cpus",),
        ("--cpu-shares", "-c"),
        ("--cpuset-cpus",),
        ("--shm-size",),
        ("--pid",),
        ("--ipc",),
        ("--uts",),
        ("--userns",),
        ("--cgroupns",),
        ("--platform",),
        ("--pull",),
        ("--runtime",),
        ("--stop-signal",),
        ("--stop-timeout",),
        ("--mac-address",),
        ("--ip",),
        ("--ip6",),
        ("--log-driver",),
        ("--gpus",),
        ("--health-cmd",),
        ("--health-interval",),
        ("--health-timeout",),
        ("--health-retries",),
        ("--health-start-period",),
        ("--health-start-interval",),
        ("--pids-limit",),
        ("--oom-score-adj",),
    ):
        parser.add_argument(*flags)
    for flags in (
        ("-p", "--publish"),
        ("-v", "--volume"),
        ("--mount",),
        ("-e", "--env"),
        ("--env-file",),
        ("-l", "--label"),
        ("--cap-add",),
        ("--cap-drop",),
        ("--device",),
        ("--dns",),
        ("--dns-search",),
        ("--dns-option", "--dns-opt"),
        ("--add-host",),
        ("--expose",),
        ("--group-add",),
        ("--network-alias", "--net-alias"),
        ("--security-opt",),
        ("--sysctl",),
        ("--tmpfs",),
        ("--ulimit",),
        ("--log-opt",),
        ("--volumes-from",),
        ("--link",),
        ("-a", "--attach"),
    ):
        parser.add_argument(*flags, action="append")
    parser.add_argument("image")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    return parser


def _words(text: str) -> list[str]:
    joined = re.sub(r"\\\r?\n", " ", text).replace("\n", " ")
    try:
        words = shlex.split(joined)
    except ValueError as exc:  # an unclosed quote
        raise Invalid(f"The command cannot be read: {exc}") from exc
    for prefix in _PREFIXES:
        if tuple(words[: len(prefix)]) == prefix:
            words = words[len(prefix) :]
    if not words:
        raise Invalid("Paste a docker run command: it has no image")
    return words


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not key or not sep:
            raise Invalid(f"{what} {value!r} is not NAME=VALUE")
        pairs[key] = rest
    return pairs


def _mount(spec: str) -> dict[str, Any]:
    """`--mount type=bind,source=/a,target=/b,readonly` in compose's long syntax."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        fields[key.strip()] = value
    kind = fields.pop("type", "volume")
    source = fields.pop("source", None) or fields.pop("src", None)
    target = (
        fields.pop("target", None) or fields.pop("destination", None) or fields.pop("dst", None)
    )
    if not target:
        raise Invalid(f"--mount {spec!r} has no target")
    mount: dict[str, Any] = {"type": kind}
    if source:
        mount["source"] = _HERE.sub(".", source)
    mount["target"] = target
    for flag in ("readonly", "ro"):
        if flag in fields:
            mount["read_only"] = fields.pop(flag) in ("", "true", "1")
    if fields:
        raise Invalid(f"--mount {spec!r}: {', '.join(sorted(fields))} cannot be converted")
    return mount


def _named_volume(source: str) -> bool:
    return bool(source) and not source.startswith(("/", ".", "~", "$"))


def _healthcheck(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.no_healthcheck:
        return {"disable": True}
    check: dict[str, Any] = {}
    if args.health_cmd:
        check["test"] = ["CMD-SHELL", args.health_cmd]
    for key in ("interval", "timeout", "start_period", "start_interval"):
        if value := getattr(args, f"health_{key}"):
            check[key] = value
    if args.health_retries:
        check["retries"] = _int(args.health_retries, "--health-retries")
    return check or None


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise Invalid(f"{what} {value!r} is not a whole number") from None


def _ulimits(values: list[str]) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    for name, value in _pairs(values, "--ulimit").items():
        soft, _, hard = value.partition(":")
        limits[name] = (
            {"soft": _int(soft, "--ulimit"), "hard": _int(hard, "--ulimit")}
            if hard
            else _int(soft, "--ulimit")
        )
    return limits


def _gpus(value: str) -> dict[str, Any]:
    device: dict[str, Any] = {"driver": "nvidia", "capabilities": ["gpu"]}
    if value == "all":
        device["count"] = "all"
    elif value.startswith("device="):
        device["device_ids"] = value.removeprefix("device=").split(",")
    else:
        device["count"] = _int(value, "--gpus")
    return {"resources": {"reservations": {"devices": [device]}}}


def _service_name(args: argparse.Namespace) -> str:
    base = args.image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    return slugify(args.name or base)


#: Options copied as they are: the namespace's name and the compose key.
_PLAIN: tuple[tuple[str, str], ...] = (
    ("hostname", "hostname"),
    ("user", "user"),
    ("workdir", "working_dir"),
    ("restart", "restart"),
    ("memory", "mem_limit"),
    ("memory_reservation", "mem_reservation"),
    ("memory_swap", "memswap_limit"),
    ("cpuset_cpus", "cpuset"),
    ("shm_size", "shm_size"),
    ("pid", "pid"),
    ("ipc", "ipc"),
    ("uts", "uts"),
    ("userns", "userns_mode"),
    ("cgroupns", "cgroup"),
    ("platform", "platform"),
    ("pull", "pull_policy"),
    ("runtime", "runtime"),
    ("stop_signal", "stop_signal"),
    ("mac_address", "mac_address"),
)
_LISTS: tuple[tuple[str, str], ...] = (
    ("publish", "ports"),
    ("env_file", "env_file"),
    ("cap_add", "cap_add"),
    ("cap_drop", "cap_drop"),
    ("device", "devices"),
    ("dns", "dns"),
    ("dns_search", "dns_search"),
    ("dns_option", "dns_opt"),
    ("add_host", "extra_hosts"),
    ("expose", "expose"),
    ("group_add", "group_add"),
    ("security_opt", "security_opt"),
    ("tmpfs", "tmpfs"),
    ("volumes_from", "volumes_from"),
    ("link", "links"),
)
_FLAGS: tuple[tuple[str, str], ...] = (
    ("interactive", "stdin_open"),
    ("tty", "tty"),
    ("privileged", "privileged"),
    ("init", "init"),
    ("read_only", "read_only"),
)
#: Whole numbers.
_NUMBERS: tuple[tuple[str, str], ...] = (
    ("cpu_shares", "cpu_shares"),
    ("pids_limit", "pids_limit"),
    ("oom_score_adj", "oom_score_adj"),
)


def _networks(args: argparse.Namespace, service: dict[str, Any], top: dict[str, Any]) -> None:
    network = args.network
    joined: dict[str, Any] = {}
    if args.network_alias:
        joined["aliases"] = args.network_alias
    if args.ip:
        joined["ipv4_address"] = args.ip
    if args.ip6:
        joined["ipv6_address"] = args.ip6
    if not network or _MODES.match(network):
        if joined:
            raise Invalid(
                "--network-alias, --ip and --ip6 need --network with a network of your own"
            )
        if network:
            service["network_mode"] = network
        return
    service["networks"] = {network: joined or None}
    # `docker run` joins a network made before (it never makes one): so does compose.
    top["networks"] = {network: {"external": True}}


def _volumes(args: argparse.Namespace, service: dict[str, Any], top: dict[str, Any]) -> None:
    volumes: list[Any] = []
    named: list[str] = []
    for given in args.volume or []:
        spec = _HERE.sub(".", given)
        source, sep, _rest = spec.partition(":")
        if sep and _named_volume(source):
            named.append(source)
        volumes.append(spec)
    for spec in args.mount or []:
        mount = _mount(spec)
        if mount["type"] == "volume" and _named_volume(mount.get("source", "")):
            named.append(mount["source"])
        volumes.append(mount)
    if volumes:
        service["volumes"] = volumes
    if named:
        # `docker run -v name:/path` makes the volume if it is missing, as compose does
        # with a volume it declares; one made before keeps its data only as `external`.
        top["volumes"] = {name: {} for name in dict.fromkeys(named)}


def _logging(args: argparse.Namespace, service: dict[str, Any]) -> None:
    if args.log_driver or args.log_opt:
        logging: dict[str, Any] = {}
        if args.log_driver:
            logging["driver"] = args.log_driver
        if args.log_opt:
            logging["options"] = _pairs(args.log_opt, "--log-opt")
        service["logging"] = logging


#: Namespaces a container shares with the host with `--<option> host`, and what that gives.
_HOST_NAMESPACES = {
    "pid": "it sees and can signal (with ptrace, enter) every process of the host",
    "network": "it uses the host's network: every port on the host, its loopback included",
    "ipc": "it shares the host's shared memory and semaphores",
    "uts": "it can change the host's name",
    "userns": "its root is the host's root (no user namespace remapping)",
    "cgroupns": "it sees the host's control groups",
}
#: Capabilities that amount to root on the host (named without CAP_, in capitals).
_ROOT_CAPABILITIES = {
    "ALL": "every capability: root on the host, as --privileged but for devices",
    "SYS_ADMIN": "mounts, namespaces and much more: a well-known way out to the host",
    "SYS_MODULE": "it loads kernel modules: root on the host",
    "SYS_RAWIO": "raw access to the host's memory and ports",
    "SYS_PTRACE": "it traces and alters other processes (with --pid host: the host's)",
    "DAC_READ_SEARCH": "it reads any file whose handle it can name, outside its mounts",
}
#: Host paths that give the host away when mounted (beside the Docker socket).
_HOST_PATHS = ("/", "/etc", "/root", "/boot", "/proc", "/sys", "/dev", "/var/lib/docker")
#: `--security-opt` values that turn a confinement off.
_UNCONFINED = re.compile(r"^(seccomp|apparmor|systempaths)[=:]unconfined$|^label[=:]disable$")


def _host_mount(source: str, read_only: bool) -> str | None:
    """Why mounting host path `source` gives the host away, or None."""
    path = "/" + source.strip("/") if source.startswith("/") else source
    if path.endswith("docker.sock"):
        return "the Docker socket: whoever runs in the container controls Docker, and so the host"
    if path in _HOST_PATHS:
        what = "reads" if read_only else "reads and writes"
        return f"the host's {path}: the container {what} it"
    return None


def _mounted(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(the option as given, why it gives the host away) of each such bind mount."""
    found = []
    for given in args.volume or []:
        source, _, rest = given.partition(":")
        why = _host_mount(source, "ro" in rest.split(":")[-1].split(","))
        if why:
            found.append((f"-v {given}", why))
    for spec in args.mount or []:
        fields = dict(part.partition("=")[::2] for part in spec.split(","))
        source = fields.get("source") or fields.get("src") or ""
        if fields.get("type", "volume") == "bind":
            read_only = fields.get("readonly", fields.get("ro", "false")) in ("", "true", "1")
            why = _host_mount(source, read_only)
            if why:
                found.append((f"--mount {spec}", why))
    return found


def _warnings(args: argparse.Namespace) -> list[str]:
    """What in the command gives the container the host, each option with what it gives."""
    said = []
    if args.privileged:
        said.append("--privileged: every capability and every device of the host: root on it")
    for option, why in _HOST_NAMESPACES.items():
        if getattr(args, option) == "host":
            said.append(f"--{option} host: {why}")
    for capability in dict.fromkeys(args.cap_add or []):
        name = capability.upper().removeprefix("CAP_")
        if name in _ROOT_CAPABILITIES:
            said.append(f"--cap-add {capability}: {_ROOT_CAPABILITIES[name]}")
    said += [f"{option}: {why}" for option, why in _mounted(args)]
    for device in args.device or []:
        said.append(f"--device {device}: the container uses the host's device directly")
    for option in args.security_opt or []:
        if _UNCONFINED.match(option):
            said.append(f"--security-opt {option}: a confinement of the container is off")
    return said


def convert(command: str) -> Converted:
    """`command` (`docker run ...`, with or without `docker run`, continued lines too) as
    a compose file with one service; Invalid with what could not be converted."""
    args = _parser().parse_args(_words(command))
    name = _service_name(args)
    service: dict[str, Any] = {"image": args.image}
    top: dict[str, Any] = {}
    for attr, key in _PLAIN:
        if (value := getattr(args, attr)) is not None:
            service[key] = value
    if args.entrypoint is not None:
        service["entrypoint"] = shlex.split(args.entrypoint) if args.entrypoint else [""]
    if args.command:
        service["command"] = args.command
    for attr, key in _FLAGS:
        if getattr(args, attr):
            service[key] = True
    for attr, key in _NUMBERS:
        if (value := getattr(args, attr)) is not None:
            service[key] = _int(value, f"--{attr.replace('_', '-')}")
    if args.cpus is not None:
        service["cpus"] = args.cpus
    if args.stop_timeout is not None:
        service["stop_grace_period"] = f"{_int(args.stop_timeout, '--stop-timeout')}s"
    for attr, key in _LISTS:
        if values := getattr(args, attr):
            service[key] = values
    _volumes(args, service, top)
    if args.env:
        service["environment"] = args.env
    if args.label:
        service["labels"] = args.label
    if args.sysctl:
        service["sysctls"] = _pairs(args.sysctl, "--sysctl")
    if args.ulimit:
        service["ulimits"] = _ulimits(args.ulimit)
    if check := _healthcheck(args):
        service["healthcheck"] = check
    if args.gpus:
        service["deploy"] = _gpus(args.gpus)
    _logging(args, service)
    _networks(args, service, top)
    notes = [why for attr, why in _DROPPED.items() if getattr(args, attr)]
    if args.name:
        # Not `container_name`: a fixed name clashes with any other container of that
        # name (another stack's, a copy of this one) and compose's names say the stack.
        notes.append(
            f"--name: {name!r} names the stack and its service; compose names the container "
            f"<stack>-{name}-1"
        )
    if args.publish_all:
        notes.append("-P/--publish-all: list the ports to publish under `ports`")
    text = yaml.dump(
        {"services": {name: service}, **top},
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
    )
    return Converted(text, name, notes, _warnings(args))
