"""Files a stack's compose project refers to stay inside the stack's own folder.

Compose reads more than the compose file: `include` (its `path`, `env_file` and
`project_directory`), `extends.file`, a service's `env_file` and `label_file`, the
`.env` of the project (and COMPOSE_FILE / COMPOSE_ENV_FILES set there). Its errors and
its resolved values (image names, labels) reach users, so a reference to another
stack's `.secrets` or to a host file would show that file's contents. Before compose
runs for a stack folder (validation on save, resolving for the list, the detail and
the update check, every action), `check_references` reads the compose files itself,
with the service's one bounded YAML loader, and refuses (Invalid) every reference whose
path (made absolute against the stack folder or the including file's project
directory, symlinks followed) leaves the stack's folder, naming the reference as
written, never any file content. Included and extended files inside the folder are
checked the same way, recursively. A compose file or `.env` that is itself a symlink
leaving the folder is refused too, and so are remote references (`oci://`, git).

Decision: references are confined to the stack's own folder for everyone, admins
included. A stack that needs a shared file keeps a copy in its folder.

Paths may use variables: they are expanded the way compose would, from the children's
environment (`stackyard.process.children.child_env`) and the env files that feed the
file's interpolation. Where the value could be one of several (a variable set in more than one
env file, a `${X:-default}`), every candidate is checked.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from stackyard.compose.yaml import MAX_BYTES, load_yaml_all
from stackyard.errors import ComposeRejected, Invalid
from stackyard.process.children import child_env

#: Compose's own file names, in its order of preference, and its override files.
COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
OVERRIDE_FILES = (
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
)
#: Files read for one project, at most (includes and extends, recursively).
MAX_FILES = 100
#: Candidate expansions of one path, at most.
MAX_CANDIDATES = 256

#: Each variable's possible values; "" among them when it may be unset.
Lookup = dict[str, set[str]]

_REMOTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://|git@)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = (":-", ":?", ":+", "-", "?", "+")


def check_references(
    folder: Path, files: list[Path] | None = None, env_file: Path | None = None
) -> None:
    """Refuse (Invalid) a project in `folder` that reads a file outside it.

    `files`: the compose files compose is given with `-f` (None: compose finds them,
    with their override files). `env_file`: the `--env-file` compose is given (None: the
    folder's `.env`).
    """
    _Checker(folder).check(files, env_file)


class _Checker:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = os.path.realpath(folder)
        self.seen: set[str] = set()

    # -- entry ------------------------------------------------------------------------
    def check(self, files: list[Path] | None, env_file: Path | None) -> None:
        lookup: Lookup = {key: {value} for key, value in child_env().items()}
        dotenv = env_file if env_file is not None else self.folder / ".env"
        if os.path.lexists(dotenv):
            lookup = _merge(lookup, self._read_env(self._own(str(dotenv)), lookup), certain=True)
        # Compose also takes these from the project's .env.
        for value in set(lookup.get("COMPOSE_ENV_FILES", ())):
            for env in self._inside_list(value, lookup, "COMPOSE_ENV_FILES"):
                lookup = _merge(lookup, self._read_env(env, lookup))
        extra = [
            path
            for value in lookup.get("COMPOSE_FILE", set())
            for path in self._inside_list(value, lookup, "COMPOSE_FILE")
        ]
        if files is None:
            files = [self.folder / name for name in (*COMPOSE_FILES, *OVERRIDE_FILES)]
            files = [path for path in files if os.path.lexists(path)]
        for path in [*(self._own(str(path)) for path in files), *extra]:
            self._file(path, [self.root], lookup)

    # -- one compose file -------------------------------------------------------------
    def _file(self, path: str, project_dirs: list[str], lookup: Lookup) -> None:
        if path in self.seen:
            return
        self.seen.add(path)
        if len(self.seen) > MAX_FILES:
            raise ComposeRejected(f"the project reads more than {MAX_FILES} files")
        where = self._name(path)
        try:
            documents = load_yaml_all(_read_text(path))
        except Invalid as exc:
            raise ComposeRejected(f"{where}: {exc.detail}") from None
        except OSError:
            return  # missing or unreadable: compose says so itself
        here = [os.path.dirname(path), *project_dirs]
        for document in documents:
            if not isinstance(document, dict):
                continue
            for entry in _as_list(document.get("include")):
                self._include(entry, here, lookup, where)
            services = document.get("services")
            if isinstance(services, dict):
                for spec in services.values():
                    if isinstance(spec, dict):
                        self._service(spec, here, project_dirs, lookup, where)

    def _include(self, entry: object, bases: list[str], lookup: Lookup, where: str) -> None:
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict):
            return
        paths = [
            real
            for raw in _as_list(entry.get("path"))
            for real in self._inside(raw, bases, lookup, "include", where)
        ]
        project_dirs = [os.path.dirname(path) for path in paths[:1]]
        if isinstance(entry.get("project_directory"), str):
            project_dirs = (
                self._inside(
                    entry["project_directory"], bases, lookup, "include project_directory", where
                )
                + project_dirs
            )
        inner = lookup
        for raw in _as_list(entry.get("env_file")):
            for env in self._inside(raw, bases, lookup, "include env_file", where):
                inner = _merge(inner, self._read_env(env, lookup))
        for directory in project_dirs:  # an included project's own .env
            dotenv = os.path.join(directory, ".env")
            if os.path.lexists(dotenv):
                inner = _merge(inner, self._read_env(self._own(dotenv), lookup))
        for path in paths:
            self._file(path, project_dirs or [os.path.dirname(path)], inner)

    def _service(
        self,
        spec: dict[str, Any],
        here: list[str],
        project_dirs: list[str],
        lookup: Lookup,
        where: str,
    ) -> None:
        extends = spec.get("extends")
        if isinstance(extends, dict) and isinstance(extends.get("file"), str):
            for real in self._inside(extends["file"], here, lookup, "extends file", where):
                self._file(real, [os.path.dirname(real), *project_dirs], lookup)
        for key in ("env_file", "label_file"):
            for item in _as_list(spec.get(key)):
                raw = item.get("path") if isinstance(item, dict) else item
                self._inside(raw, here, lookup, key, where)

    # -- paths ------------------------------------------------------------------------
    def _own(self, path: str) -> str:
        """The real path of a file compose reads by its name (a compose file, a .env);
        Invalid when it is a link that leaves the stack folder."""
        real = os.path.realpath(path)
        if not self._contains(real):
            name = _shown(os.path.basename(path))
            raise ComposeRejected(f"{name} is a link that leaves the stack folder; {_RULE}")
        return real

    def _contains(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root + os.sep)

    def _inside(
        self, raw: object, bases: Iterable[str], lookup: Lookup, what: str, where: str | None
    ) -> list[str]:
        """The real paths `raw` may stand for; Invalid when one leaves the stack folder."""
        if not isinstance(raw, str):
            return []  # not a path: compose says what is wrong with it
        found: list[str] = []
        named = f"{what} {raw!r}" + (f" in {where}" if where else "")
        for candidate in _expand(raw, lookup):
            if _REMOTE.match(candidate):
                raise ComposeRejected(f"{named} is remote; {_RULE}")
            if candidate.startswith("~"):
                raise ComposeRejected(f"{named} points outside the stack folder; {_RULE}")
            for base in bases:
                real = os.path.realpath(os.path.join(base, candidate))
                if not self._contains(real):
                    raise ComposeRejected(f"{named} points outside the stack folder; {_RULE}")
                if real not in found:
                    found.append(real)
        return found

    def _inside_list(self, value: str, lookup: Lookup, what: str) -> list[str]:
        """A path list of COMPOSE_FILE / COMPOSE_ENV_FILES: the whole value and each part
        (split on every separator compose may use), all inside the folder."""
        parts = {value, *re.split(r"[:;,]", value)} - {""}
        found: list[str] = []
        for part in sorted(parts):
            for real in self._inside(part, [self.root], lookup, what, "the .env file"):
                if real not in found and os.path.isfile(real):
                    found.append(real)
        return found

    def _read_env(self, path: str, lookup: Lookup) -> Lookup:
        try:
            return _parse_env(_read_text(path), lookup)
        except OSError:
            return {}

    def _name(self, path: str) -> str:
        return _shown(os.path.relpath(path, self.root))


_RULE = "references must stay in the stack's own folder"


def _shown(name: str) -> str:
    """A file's name in a message; a scratch copy checked on save is named as the file it
    stands for."""
    match = re.fullmatch(r"\.(.+)\.stackyard-check", name)
    return match.group(1) if match else name


def _read_text(path: str) -> str:
    if not os.path.isfile(path):  # a folder, a FIFO, a device: never opened
        raise FileNotFoundError(path)
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Invalid(f"File too large (more than {MAX_BYTES // 1024} KiB)")
    return data.decode(errors="replace")


def _as_list(value: object) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _merge(first: Lookup, second: Mapping[str, set[str]], certain: bool = False) -> Lookup:
    """Both sources' values; a variable only `second` sets may also be unset, unless
    compose certainly reads `second` (the project's own env file)."""
    merged = {key: set(values) for key, values in first.items()}
    for key, values in second.items():
        if key not in merged and not certain:
            merged[key] = {""}
        merged.setdefault(key, set()).update(values)
    return merged


# -- env files and interpolation, over-approximated ------------------------------------
def _parse_env(text: str, lookup: Lookup) -> Lookup:
    """The variables of a dotenv file, each line on its own, every reading of a value kept
    (raw, unquoted, expanded): checking more candidates than compose uses is safe."""
    found: Lookup = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if not _NAME.fullmatch(key):
            continue
        values = {value, value.split(" #", 1)[0].strip()}
        for quote in ("'", '"'):
            if value.startswith(quote):
                values.add(value[1:].split(quote, 1)[0])
        expanded = set(values)
        for item in values:
            if "$" in item:
                expanded |= _expand(item, _merge(lookup, found, certain=True))
        found.setdefault(key, set()).update(expanded)
    return found


def _expand(text: str, lookup: Lookup) -> set[str]:
    """Every string compose's interpolation of `text` may give (a superset)."""
    pieces: list[set[str]] = []
    i = 0
    literal = []
    while i < len(text):
        char = text[i]
        if char != "$":
            literal.append(char)
            i += 1
            continue
        if text.startswith("$$", i):
            literal.append("$")
            i += 2
            continue
        if text.startswith("${", i):
            end = closing_brace(text, i + 2)
            if end is None:  # malformed: compose refuses it
                literal.append(text[i:])
                break
            pieces.append({"".join(literal)})
            literal = []
            pieces.append(_braced(text[i + 2 : end], lookup))
            i = end + 1
            continue
        match = _NAME.match(text, i + 1)
        if match is None:
            literal.append(char)
            i += 1
            continue
        pieces.append({"".join(literal)})
        literal = []
        pieces.append(lookup.get(match.group(), {""}))
        i = match.end()
    pieces.append({"".join(literal)})
    total = 1
    for piece in pieces:
        total *= len(piece)
        if total > MAX_CANDIDATES:
            raise ComposeRejected(f"too many possible values of {text!r} to check its path")
    return {"".join(combination) for combination in itertools.product(*pieces)}


def _braced(body: str, lookup: Lookup) -> set[str]:
    match = _NAME.match(body)
    name = match.group() if match else body
    rest = body[len(name) :] if match else ""
    values = lookup.get(name, {""})
    for operator in _OPERATORS:
        if rest.startswith(operator):
            return values | _expand(rest[len(operator) :], lookup)
    return values


def closing_brace(text: str, start: int) -> int | None:
    depth = 1
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
