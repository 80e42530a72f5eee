#!/usr/bin/env bash
# The static checks: ruff (lint and format), mypy (strict on src/stackyard:
# pyproject.toml), then ESLint on the UI (web/eslint.config.js). Run by `make lint` and
# by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== ruff"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench

echo "== mypy"
.venv/bin/mypy

echo "== eslint"
(cd web && npm run lint --silent)
