#!/usr/bin/env bash
# Every test: lint, the type checker (mypy, strict on src/stackyard: pyproject.toml), the
# UI's unit tests (Vitest), then pytest (unit, integration with the
# real Docker engine, registry and PostgreSQL, and browser tests in Chromium).
# Expects `scripts/setup.sh --test` to have run (`make test` does both).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/lint.sh

echo "== vitest"
(cd web && npm test --silent 2>&1 | grep -v 'config "nodedir"')

# Four workers on two cores: most tests wait on Docker, compose, a server or a browser.
# Each worker has its own servers, registry, PostgreSQL cluster and Docker label.
echo "== pytest (${PYTEST_WORKERS:-4} workers)"
exec .venv/bin/pytest -n "${PYTEST_WORKERS:-4}" --dist worksteal "$@"
