"""Only `stackyard.docker` speaks the Docker SDK: no other module of the package imports
`docker` (or `requests`, the SDK's transport), so that the SDK's values and errors are
converted in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import stackyard

PACKAGE = Path(stackyard.__file__).parent
SDK = {"docker", "requests"}


def sdk_imports(path: Path) -> set[str]:
    """The SDK modules `path` imports (at any depth: under TYPE_CHECKING or in a function)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] in SDK)
    return found


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
    assert "docker.errors" in sdk_imports(PACKAGE / "docker" / "engine.py")
    assert "requests" in sdk_imports(PACKAGE / "docker" / "helper.py")
