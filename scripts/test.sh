#!/usr/bin/env bash
# scripts/test.sh [CAPABILITY] [PYTEST ARGUMENTS...]
#
# Without a capability: every test. pytest (unit, integration with the real Docker
# engine, registry and PostgreSQL, browser tests in Chromium), given the arguments, and,
# beside it, the static checks (scripts/lint.sh: ruff, mypy strict, ESLint) and the UI's
# unit tests (Vitest).
#
# With one (the first argument names a folder of tests/: `scripts/test.sh backups -x`):
# that capability's tests alone, pytest only: tests/CAPABILITY/ and its browser tests,
# tests/e2e/test_CAPABILITY.py where there is one; the other arguments go to pytest.
#
# Expects `scripts/setup.sh --test` to have run (`make test` does both).
#
# In a whole run the checks run at a lower priority while pytest runs: pytest spends much
# of its time waiting on Docker, servers and browsers, and they fill the cores meanwhile.
# When pytest is done they get the normal priority back (where the user may raise it: root
# may), so that on a machine busy with other work they are not left with its crumbs. Their
# output is printed after pytest's; the run fails when either fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Four workers on two cores: most tests wait on Docker, compose, a server or a browser.
# Each worker has its own servers, registry, PostgreSQL cluster and Docker label.
workers="${PYTEST_WORKERS:-4}"

if [[ $# -gt 0 && "$1" =~ ^[a-z][a-z0-9_]*$ && -d "tests/$1" ]]; then
    capability="$1"
    shift
    paths=("tests/$capability")
    if [[ -f "tests/e2e/test_$capability.py" ]]; then
        paths+=("tests/e2e/test_$capability.py")
    fi
    echo "== pytest: ${paths[*]} ($workers workers)"
    exec .venv/bin/pytest -n "$workers" --dist worksteal "${paths[@]}" "$@"
fi

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

echo "== pytest ($workers workers)"
status=0
.venv/bin/pytest -n "$workers" --dist worksteal "$@" || status=$?

renice -n 0 -g "$checks" >/dev/null 2>&1 || true
if wait "$checks"; then
    cat "$checks_log"
else
    cat "$checks_log"
    echo "test.sh: the static checks or Vitest failed (above)" >&2
    status=1
fi
exit "$status"
