"""A stack folder's compose project as its own files declare it, read without running
compose: what the stack list shows (project name, services, images).

`docker compose config` (`stackyard.compose.project`) is the truth, but it costs a
subprocess per stack; the list reads the files instead, the way compose would for the
common case:

- the compose file compose picks (`compose.yaml`, `compose.yml`, `docker-compose.yml`,
  `docker-compose.yaml`, first found) and the first override file found
  (`compose.override.yml`, ...), their documents merged in order, service by service;
- interpolation (`$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`,
  `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`, `$$`) from the children's environment
  (`stackyard.process.children.child_env`) over the stack's own `.env` (KEY=VALUE,
  quotes, comments, `export `), the environment winning as it does for compose;
- the project name: COMPOSE_PROJECT_NAME of the `.env`, else the top-level `name:`,
  else the folder's name, normalised as compose does (lowercase, only `[a-z0-9_-]`, no
  leading `_` or `-`);
- services of profiles not enabled by COMPOSE_PROFILES are left out, as compose does;
  a service with `build:` and no `image:` has no image.

Only files of the stack folder are read, each opened beneath it (a link that leaves the
folder is refused, as `check_references` refuses it): nothing outside the folder, and
no `include:` or `extends:` is followed. A project that uses those (or sets COMPOSE_FILE
or COMPOSE_ENV_FILES in its `.env`) is read as far as its own file goes and marked
incomplete: the caller prefers the last full resolution for it. Errors are Invalid,
with the YAML parser's message (problem and line, never a snippet) or the declared
value that is wrong.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from stackyard.compose.fastyaml import load_yaml_all_fast
from stackyard.compose.project import Project, Service, normalize_project_name
from stackyard.compose.references import check_references, closing_brace
from stackyard.compose.yaml import MAX_BYTES
from stackyard.errors import ComposeRejected, Invalid
from stackyard.fs import beneath

#: How interpolation looks a variable up (`Mapping.get`).
Lookup = Callable[[str], str | None]

#: Compose's own order of preference (compose-go's DefaultFileNames and
#: DefaultOverrideFileNames): one compose file and at most one override file are read.
MAIN_FILES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
OVERRIDE_FILES = (
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
)
#: `.env` variables that change which files compose reads: not modelled here.
_UNMODELLED_ENV = ("COMPOSE_FILE", "COMPOSE_ENV_FILES", "COMPOSE_PATH_SEPARATOR")

#: Service keys that name other files.
_REFERENCES = ("extends", "env_file", "label_file")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = (":-", ":?", ":+", "-", "?", "+")
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Declared:
    """What a folder's files declare: a project, or why there is none (`error`).
    `complete` is False when compose would read more than this reader does."""

    project: Project | None
    error: str | None = None
    complete: bool = True


# -- dotenv ---------------------------------------------------------------------------
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "$": "$"}


def parse_dotenv(text: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of a `.env` file: `KEY=VALUE` (or `KEY: VALUE`), an optional
    `export `, `#` comments (a whole line, or after a space in an unquoted value),
    single quotes (literal), double quotes (escapes, may span lines) and `${VAR}`
    expansion in unquoted and double-quoted values (from `base`, then the file's own
    earlier variables). A bare `KEY` takes its value from `base`, when set there."""
    base = base or {}
    found: dict[str, str] = {}

    def lookup(name: str) -> str | None:
        return base.get(name, found.get(name))

    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("export ") or line.startswith("export\t"):
            line = line[len("export") :].lstrip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([A-Za-z_][A-Za-z0-9_.-]*)\s*([=:])?\s?", line)
        if match is None:
            continue
        key = match.group(1)
        if match.group(2) is None:  # a bare KEY: inherited from the environment
            if line[match.end() :].strip() == "" and key in base:
                found[key] = base[key]
            continue
        rest = line[match.end() :].lstrip()
        if rest[:1] in ("'", '"'):
            quote = rest[0]
            body = rest[1:]
            # A quoted value may span lines, up to its closing quote.
            while _closing_quote(body, quote) is None and i < len(lines):
                body += "\n" + lines[i]
                i += 1
            end = _closing_quote(body, quote)
            value = body if end is None else body[:end]
            if quote == '"':
                value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)
                value = _expand_quiet(value, lookup)
        else:
            value = re.split(r"\s#", rest, maxsplit=1)[0].strip()
            value = _expand_quiet(value, lookup)
        found[key] = value
    return found


def _closing_quote(body: str, quote: str) -> int | None:
    i = 0
    while i < len(body):
        if body[i] == "\\" and quote == '"':
            i += 2
            continue
        if body[i] == quote:
            return i
        i += 1
    return None


def _expand_quiet(value: str, lookup: Lookup) -> str:
    try:
        return _substitute(value, lookup)
    except Invalid:
        return value  # compose reports a broken .env itself; the list keeps the text


# -- interpolation --------------------------------------------------------------------
def interpolate(text: str, env: Mapping[str, str]) -> str:
    """`text` with compose's interpolation from `env`; Invalid for a required variable
    that is missing (`${VAR:?error}`) or a malformed `${...}`."""
    return _substitute(text, env.get)


def _substitute(text: str, lookup: Lookup) -> str:
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$":
            j = text.find("$", i)
            j = len(text) if j < 0 else j
            out.append(text[i:j])
            i = j
            continue
        if text.startswith("$$", i):
            out.append("$")
            i += 2
            continue
        if text.startswith("${", i):
            end = closing_brace(text, i + 2)
            if end is None:
                raise Invalid(f"Invalid template: {text!r}")
            out.append(_braced(text[i + 2 : end], lookup, text))
            i = end + 1
            continue
        match = _NAME.match(text, i + 1)
        if match is None:  # a lone `$`: kept as it is
            out.append("$")
            i += 1
            continue
        out.append(lookup(match.group()) or "")
        i = match.end()
    return "".join(out)


def _braced(body: str, lookup: Lookup, whole: str) -> str:
    match = _NAME.match(body)
    if match is None:
        raise Invalid(f"Invalid template: {whole!r}")
    name, rest = match.group(), body[match.end() :]
    value = lookup(name)
    if not rest:
        return value or ""
    for operator in _OPERATORS:
        if rest.startswith(operator):
            argument = rest[len(operator) :]
            break
    else:
        raise Invalid(f"Invalid template: {whole!r}")
    unset_or_empty = operator.startswith(":")
    missing = value is None or (unset_or_empty and value == "")
    if operator in (":-", "-"):
        return _substitute(argument, lookup) if missing else value or ""
    if operator in (":+", "+"):
        return "" if missing else _substitute(argument, lookup)
    if missing:  # :? and ?
        message = _substitute(argument, lookup)
        raise Invalid(
            f"required variable {name} is missing a value" + (f": {message}" if message else "")
        )
    return value or ""


def _interpolate_tree(value: object, env: Mapping[str, str], path: str) -> object:
    """Every string value of a document interpolated (keys are not), as compose does."""
    if isinstance(value, str):
        if "$" not in value:
            return value
        try:
            return _substitute(value, env.get)
        except Invalid as exc:
            raise ComposeRejected(f"error while interpolating {path}: {exc.detail}") from None
    if isinstance(value, dict):
        return {
            k: _interpolate_tree(v, env, f"{path}.{k}" if path else str(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_interpolate_tree(v, env, f"{path}[{n}]") for n, v in enumerate(value)]
    return value


# -- project name ---------------------------------------------------------------------
def _invalid_name(name: str) -> Invalid:
    return ComposeRejected(
        f'invalid project name "{name}": must consist only of lowercase alphanumeric '
        "characters, hyphens, and underscores as well as start with a letter or number"
    )


# -- the folder -----------------------------------------------------------------------
def read_declared(
    folder: Path,
    base_env: Mapping[str, str] | None = None,
    present: Collection[str] | None = None,
) -> Declared:
    """The project `folder`'s files declare (see the module); never raises Invalid.
    `present`: the names of the folder's compose inputs, when the caller has just listed
    them (only those are opened)."""
    try:
        return _read(folder, dict(base_env or {}), present)
    except Invalid as exc:
        return Declared(None, exc.detail)


def _read(folder: Path, base: dict[str, str], present: Collection[str] | None) -> Declared:
    def candidates(names: tuple[str, ...]) -> list[str]:
        return [name for name in names if present is None or name in present]

    try:
        dir_fd = os.open(folder, _DIRECTORY)
    except OSError as exc:
        raise ComposeRejected(f"the stack folder cannot be read ({exc.strerror})") from None
    try:
        main = next(
            (
                (name, text)
                for name in candidates(MAIN_FILES)
                if (text := _read_file(dir_fd, name)) is not None
            ),
            None,
        )
        if main is None:
            raise ComposeRejected("no compose file in the stack folder")
        override = next(
            (
                (name, text)
                for name in candidates(OVERRIDE_FILES)
                if (text := _read_file(dir_fd, name)) is not None
            ),
            None,
        )
        dotenv = _read_file(dir_fd, ".env") if candidates((".env",)) else None
    finally:
        os.close(dir_fd)

    found = parse_dotenv(dotenv, base) if dotenv is not None else {}
    env = {**found, **base}  # the environment wins over the .env, as for compose
    complete = not any(env.get(key) for key in _UNMODELLED_ENV)

    documents: list[tuple[str, dict[str, Any]]] = []
    for name, text in [found_file for found_file in (main, override) if found_file]:
        try:
            loaded = load_yaml_all_fast(text)
        except Invalid as exc:
            raise ComposeRejected(f"{name}: {exc.detail}") from None
        for document in loaded:
            if document is None:
                continue
            if not isinstance(document, dict):
                raise ComposeRejected(f"{name}: the top level must be a mapping")
            if "$" in text:
                document = _interpolate_tree(document, env, "")
            documents.append((name, cast(dict[str, Any], document)))
    if not documents:
        raise ComposeRejected(f"{main[0]}: empty compose file")

    file_name = ""
    specs: dict[str, dict[str, Any]] = {}
    for name, document in documents:
        if document.get("include"):
            complete = False
        if isinstance(document.get("name"), str) and document["name"]:
            file_name = document["name"]
        services = document.get("services")
        if services is None:
            continue
        if not isinstance(services, dict):
            raise ComposeRejected(f"{name}: services must be a mapping")
        for service, spec in services.items():
            if spec is None:
                spec = {}
            if not isinstance(spec, dict):
                raise ComposeRejected(f"services.{service} must be a mapping")
            merged = specs.setdefault(str(service), {})
            for key, value in spec.items():
                if value is None:
                    merged.pop(key, None)  # `!reset` / null in an override
                else:
                    merged[key] = value

    profiles = {p.strip() for p in env.get("COMPOSE_PROFILES", "").split(",") if p.strip()}
    services = []
    for service, spec in sorted(specs.items()):
        if "extends" in spec:
            complete = False
        wanted = spec.get("profiles")
        if wanted and "*" not in profiles and not profiles.intersection(map(str, wanted)):
            continue
        image = spec.get("image")
        if isinstance(image, (int, float)) and not isinstance(image, bool):
            image = str(image)
        if image is not None and not isinstance(image, str):
            raise ComposeRejected(f"services.{service}.image must be a string")
        builds = "build" in spec
        if not image and not builds and "extends" not in spec:
            raise ComposeRejected(
                f"service {service!r} has neither an image nor a build context specified"
            )
        services.append(Service(service, image or None, builds))

    refers = any(key in spec for spec in specs.values() for key in _REFERENCES)
    if refers or not complete:
        # Files beside the compose file: the full check of where they lead (rarely
        # needed: includes, extends, env_file, label_file, COMPOSE_FILE).
        check_references(folder)
    return Declared(Project(_project_name(env, file_name, folder), tuple(services)), None, complete)


def _project_name(env: Mapping[str, str], file_name: str, folder: Path) -> str:
    from_env = env.get("COMPOSE_PROJECT_NAME")
    if from_env:
        if normalize_project_name(from_env) != from_env:
            raise _invalid_name(from_env)
        return from_env
    name = normalize_project_name(file_name) or normalize_project_name(folder.name)
    if not name:
        raise ComposeRejected("project name must not be empty")
    return name


def _read_file(dir_fd: int, name: str) -> str | None:
    """A file of the stack folder (None: there is none), opened beneath it."""
    try:
        fd = beneath.open_beneath(dir_fd, name, _READ)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.ELOOP):
            raise ComposeRejected(
                f"{name} is a link that leaves the stack folder; references must stay "
                "in the stack's own folder"
            ) from None
        if exc.errno in (errno.ENOTDIR, errno.EISDIR):
            return None
        raise ComposeRejected(f"{name} cannot be read ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a folder, a FIFO, a device: never read (compose fails on it)
        chunks = []
        size = 0
        while chunk := os.read(fd, 256 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BYTES:
                raise ComposeRejected(f"{name}: file too large (more than {MAX_BYTES // 1024} KiB)")
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")


# -- the cache ------------------------------------------------------------------------
class DeclaredCache:
    """`read_declared` per folder, kept until the folder's fingerprint changes (the same
    fingerprint as the project cache: the compose files and `.env`, by mtime and size):
    a list of unchanged folders parses nothing."""

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self.base_env = dict(base_env or {})
        self._cache: dict[Path, tuple[tuple[Any, ...], Declared]] = {}
        self._lock = threading.Lock()
        self.reads = 0  # folders read (for tests and the benchmark)

    def get(self, folder: Path, stamp: tuple[Any, ...]) -> Declared:
        with self._lock:
            hit = self._cache.get(folder)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        declared = read_declared(folder, self.base_env, [name for name, *_ in stamp])
        with self._lock:
            self._cache[folder] = (stamp, declared)
            self.reads += 1
        return declared

    def retain(self, folders: set[Path]) -> None:
        """Forget folders that are no stacks any more."""
        with self._lock:
            for folder in [f for f in self._cache if f not in folders]:
                del self._cache[folder]
