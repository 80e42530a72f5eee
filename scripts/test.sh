#!/usr/bin/env bash
# Every test: pytest (unit, integration with the real Docker engine, registry and
# PostgreSQL, browser tests in Chromium) and, beside it, the static checks
# (scripts/lint.sh: ruff, mypy strict, ESLint) and the UI's unit tests (Vitest).
# Expects `scripts/setup.sh --test` to have run (`make test` does both).
#
# The checks run at a lower priority while pytest runs: pytest spends much of its time
# waiting on Docker, servers and browsers, and they fill the cores meanwhile. When pytest
# is done they get the normal priority back (where the user may raise it: root may), so
# that on a machine busy with other work they are not left with its crumbs. Their output
# is printed after pytest's; the run fails when either fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

checks_log="$(mktemp)"
trap 'rm -f "$checks_log"' EXIT
# In a process group of their own (setsid), to renice them all at once.
setsid nice -n 10 bash -c 'set -euo pipefail
    scripts/lint.sh
    echo "== vitest"
    cd web && npm test --silent 2>&1 | grep -v "config \"nodedir\""
' >"$checks_log" 2>&1 &
checks=$!
# Ctrl-C reaches pytest only (the checks have a session of their own): end them too.
trap 'kill -- -"$checks" 2>/dev/null || true; rm -f "$checks_log"' EXIT

# Four workers on two cores: most tests wait on Docker, compose, a server or a browser.
# Each worker has its own servers, registry, PostgreSQL cluster and Docker label.
echo "== pytest (${PYTEST_WORKERS:-4} workers)"
status=0
.venv/bin/pytest -n "${PYTEST_WORKERS:-4}" --dist worksteal "$@" || status=$?

renice -n 0 -g "$checks" >/dev/null 2>&1 || true
if wait "$checks"; then
    cat "$checks_log"
else
    cat "$checks_log"
    echo "test.sh: the static checks or Vitest failed (above)" >&2
    status=1
fi
exit "$status"
