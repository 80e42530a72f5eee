#!/usr/bin/env bash
# The static checks: ruff (lint and format), import-linter (imports go down the floors),
# mypy (strict on src/stackyard: pyproject.toml), then ESLint on the UI
# (web/eslint.config.js). Run by `make lint` and by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== ruff"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench

echo "== import-linter (the floors: pyproject.toml [tool.importlinter])"
.venv/bin/lint-imports --no-cache

echo "== mypy"
.venv/bin/mypy

echo "== eslint"
(cd web && npm run lint --silent)
