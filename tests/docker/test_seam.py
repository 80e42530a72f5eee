"""Only `stackyard.docker` speaks the Docker SDK: no other module of the package imports
`docker` (or `requests`, the SDK's transport), so that the SDK's values and errors are
converted in one place."""

from __future__ import annotations

import re
from pathlib import Path

import stackyard

PACKAGE = Path(stackyard.__file__).parent
SDK = {"docker", "requests"}


#: An import statement at any depth (in a function, under TYPE_CHECKING) and its module.
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.MULTILINE)


def sdk_imports(path: Path) -> set[str]:
    """The SDK modules `path` imports, at any depth. Read line by line rather than with
    `ast`: CPython 3.11.7 can fail parsing while another thread compiles ("AST constructor
    recursion depth mismatch"), and threads of earlier tests may still run."""
    found = {module for module in _IMPORT.findall(path.read_text())}
    return {module for module in found if module.split(".")[0] in SDK}


def modules() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts): path
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_only_stackyard_docker_imports_the_docker_sdk():
    outside = {
        name: sorted(imported)
        for name, path in modules().items()
        if not name.startswith("stackyard.docker.") and (imported := sdk_imports(path))
    }
    assert outside == {}, f"Modules outside stackyard.docker import the Docker SDK: {outside}"


def test_the_walk_sees_the_imports_of_stackyard_docker():
    """The SDK's names come from stackyard.docker.sdk (typed there, loaded when used)."""
    assert {"docker", "docker.errors", "docker.types", "requests"} <= sdk_imports(
        PACKAGE / "docker" / "sdk.py"
    )
