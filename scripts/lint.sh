#!/usr/bin/env bash
# The static checks: ruff (lint and format), then mypy (strict on src/stackyard:
# pyproject.toml). Run by `make lint` and by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== ruff"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench

echo "== mypy"
.venv/bin/mypy
