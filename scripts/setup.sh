#!/usr/bin/env bash
# Prepare this machine (Debian bookworm, root) to run Stackyard, and with --test
# also to run its test suite. Idempotent: every step first checks whether it is
# already done, so a second run only prints "ok" lines and takes a few seconds.
#
#   scripts/setup.sh          what is needed to RUN the service
#   scripts/setup.sh --test   plus what the tests need
#
# Long output (apt, npm, docker build) goes to .cache/setup-logs/; its tail is
# printed only when a step fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPTS="$ROOT/scripts"
LOGDIR="$ROOT/.cache/setup-logs"
STAMPS="$ROOT/.cache/setup-stamps"
UV_VERSION="0.13.8"

WITH_TEST=0
for arg in "$@"; do
    case "$arg" in
        --test) WITH_TEST=1 ;;
        -h|--help)
            sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0 ;;
        *) echo "setup.sh: unknown argument: $arg (use --test or --help)" >&2; exit 2 ;;
    esac
done

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

mkdir -p "$LOGDIR" "$STAMPS"
START_TS=$(date +%s)

say() { printf '%s\n' "$*"; }
die() { printf 'setup.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# run_logged NAME CMD...: run CMD with its output in $LOGDIR/NAME.log; on failure
# print the log's tail and stop.
run_logged() {
    local name="$1"; shift
    local log="$LOGDIR/$name.log"
    if ! "$@" >"$log" 2>&1; then
        printf 'setup.sh: ERROR: step "%s" failed: %s\n' "$name" "$*" >&2
        printf -- '--- last lines of %s ---\n' "$log" >&2
        grep -v 'config "nodedir"' "$log" | tail -n 40 >&2
        exit 1
    fi
}

# in_dir DIR CMD...: run CMD in DIR (a subshell, so the caller's cwd stays).
in_dir() { local d="$1"; shift; (cd "$d" && "$@"); }

pkg_installed() {
    # No `dpkg -s | grep -q` here: with pipefail, grep's early exit (SIGPIPE to
    # dpkg) would make an installed package look missing.
    local status
    status="$(dpkg -s "$1" 2>/dev/null)" || return 1
    [[ "$status" == *$'\nStatus: install ok installed'$'\n'* ]]
}

# ---------------------------------------------------------------- apt packages
step_apt() {
    local pkgs=(docker.io zip git openssh-client gnupg restic)
    if [ "$WITH_TEST" -eq 1 ]; then
        pkgs+=(docker-registry busybox-static chromium postgresql docker-compose openssh-server openssl
               debootstrap unzip)
    fi
    local missing=() p
    for p in "${pkgs[@]}"; do
        pkg_installed "$p" || missing+=("$p")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        say "apt packages: ok (${pkgs[*]})"
        return
    fi
    say "apt packages: installing ${missing[*]} (log: .cache/setup-logs/apt.log)"
    # Never let package scripts start services (sshd, postgresql, dockerd):
    # we start what we need ourselves. Docker-based Debian images ship this file.
    local made_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
        "${SUDO[@]}" chmod 755 /usr/sbin/policy-rc.d
        made_policy=1
    fi
    local rc=0
    # (No `set -e` subshell: errexit is ignored in a `||` context; chain with &&.)
    {
        echo "== apt-get update" &&
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
        echo "== apt-get install ${missing[*]}" &&
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends "${missing[@]}"
    } >"$LOGDIR/apt.log" 2>&1 || rc=$?
    if [ "$made_policy" -eq 1 ]; then "${SUDO[@]}" rm -f /usr/sbin/policy-rc.d; fi
    if [ "$rc" -ne 0 ]; then
        echo "setup.sh: ERROR: apt-get failed; last lines of $LOGDIR/apt.log:" >&2
        tail -n 40 "$LOGDIR/apt.log" >&2
        exit 1
    fi
    for p in "${missing[@]}"; do
        pkg_installed "$p" || die "package $p still not installed after apt-get (see $LOGDIR/apt.log)"
    done
    say "apt packages: installed ${missing[*]}"
}

# -------------------------------------------------------- docker compose v2
compose_v2_version() {
    local v
    v="$(docker compose version --short 2>/dev/null || true)"
    case "$v" in
        v2.*|2.*) printf '%s' "${v#v}"; return 0 ;;
    esac
    return 1
}

step_compose() {
    local v
    if v="$(compose_v2_version)"; then
        say "compose v2 plugin: ok ($v)"
        return
    fi
    say "compose v2 plugin: fetching docker-compose from Debian forky (private apt state)"
    local A="$ROOT/.cache/apt-forky"
    mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/sources.list.d" "$A/download"
    : >"$A/sources.list"
    cat >"$A/sources.list.d/forky.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: forky
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    local opts=(
        -o "Dir::State::Lists=$A/lists"
        -o "Dir::Etc::SourceList=$A/sources.list"
        -o "Dir::Etc::SourceParts=$A/sources.list.d"
        -o "Dir::Cache=$A/cache"
        -o "Dir::Cache::archives=$A/cache/archives"
        -o "Dir::Cache::pkgcache="
        -o "Dir::Cache::srcpkgcache="
        -o "Acquire::Languages=none"
        -o "APT::Get::List-Cleanup=false"
        -o "APT::Sandbox::User=root"
    )
    run_logged apt-forky-update apt-get "${opts[@]}" update
    rm -f "$A/download"/docker-compose_*.deb
    (cd "$A/download" && apt-get "${opts[@]}" download docker-compose) \
        >"$LOGDIR/apt-forky-download.log" 2>&1 || {
            echo "setup.sh: ERROR: apt-get download docker-compose (forky) failed:" >&2
            tail -n 40 "$LOGDIR/apt-forky-download.log" >&2
            exit 1
        }
    local debs=("$A/download"/docker-compose_*.deb)
    local deb="${debs[0]}"
    [ -f "$deb" ] || die "no docker-compose .deb downloaded (see $LOGDIR/apt-forky-download.log)"
    local x="$A/extract"
    rm -rf "$x"; mkdir -p "$x"
    dpkg -x "$deb" "$x"
    local bin="$x/usr/libexec/docker/cli-plugins/docker-compose"
    [ -f "$bin" ] || die "$(basename "$deb") has no usr/libexec/docker/cli-plugins/docker-compose"
    "${SUDO[@]}" install -D -m 0755 "$bin" /usr/local/lib/docker/cli-plugins/docker-compose
    rm -rf "$x"
    v="$(compose_v2_version)" || die "docker compose version still does not answer v2 after install"
    say "compose v2 plugin: installed $v ($(basename "$deb"))"
}

# --------------------------------------------------------------- docker engine
step_dockerd() {
    "$SCRIPTS/dockerd.sh"
}

# ------------------------------------------------------------------ test images
# The recipe hash of a test image: its Dockerfile and those of the images it is
# built FROM, so editing a Dockerfile rebuilds it (and what depends on it).
image_recipe_hash() {
    case "$1" in
        busybox) cat "$SCRIPTS/images/busybox/Dockerfile" ;;
        big) cat "$SCRIPTS/images/busybox/Dockerfile" "$SCRIPTS/images/big/Dockerfile" ;;
        helper) cat "$SCRIPTS/images/busybox/Dockerfile" "$SCRIPTS/images/helper/Dockerfile"
                tar --version | head -n 1 ;;
    esac | sha256sum | cut -c1-16
}

image_recipe_of() {
    docker image inspect -f '{{index .Config.Labels "stackyard.test-image.recipe"}}' "$1" 2>/dev/null || true
}

build_test_image() {
    local name="$1" tag="$2" recipe="$3"
    local ctx
    ctx="$(mktemp -d)"
    cp "$SCRIPTS/images/$name/Dockerfile" "$ctx/Dockerfile"
    if [ "$name" = busybox ]; then
        [ -x /bin/busybox ] || die "/bin/busybox missing (busybox-static not installed?)"
        cp /bin/busybox "$ctx/busybox"
    fi
    if [ "$name" = helper ]; then
        # GNU tar and what it links, at the same paths (the loader's too).
        local lib
        install -D -m 0755 "$(command -v tar)" "$ctx/root/usr/local/bin/tar"
        for lib in $(ldd "$(command -v tar)" | grep -o '/[^ ]*'); do
            install -D -m 0755 "$(readlink -f "$lib")" "$ctx/root$lib"
        done
    fi
    local rc=0
    DOCKER_BUILDKIT=0 docker build --label "stackyard.test-image.recipe=$recipe" -t "$tag" "$ctx" \
        >"$LOGDIR/image-$name.log" 2>&1 || rc=$?
    rm -rf "$ctx"
    if [ "$rc" -ne 0 ]; then
        echo "setup.sh: ERROR: building $tag failed; last lines of $LOGDIR/image-$name.log:" >&2
        tail -n 40 "$LOGDIR/image-$name.log" >&2
        exit 1
    fi
}

step_images() {
    local spec name tag recipe have
    for spec in busybox:stackyard-test/busybox:1 big:stackyard-test/big:1 helper:stackyard-test/helper:1; do
        name="${spec%%:*}"; tag="${spec#*:}"
        recipe="$(image_recipe_hash "$name")"
        have="$(image_recipe_of "$tag")"
        if [ "$have" = "$recipe" ]; then
            say "test image $tag: ok (present)"
        else
            build_test_image "$name" "$tag" "$recipe"
            if [ -z "$have" ]; then say "test image $tag: built"; else say "test image $tag: rebuilt (recipe changed)"; fi
        fi
    done
    # Old versions of the test images that a rebuild left untagged.
    local dangling
    dangling="$(docker image ls -q --filter dangling=true --filter label=stackyard.test-image=1)"
    if [ -n "$dangling" ]; then
        # shellcheck disable=SC2086
        docker image rm $dangling >/dev/null 2>&1 || true
    fi
}

# ---------------------------------------------------------------------- python
step_python() {
    local uv=(uv) have
    have="$(uv --version 2>/dev/null | awk '{print $2}' || true)"
    if [ "$have" = "$UV_VERSION" ]; then
        say "uv: ok ($UV_VERSION)"
    else
        run_logged pip-uv python3 -m pip install "uv==$UV_VERSION"
        command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1 || true
        hash -r
        have="$(uv --version 2>/dev/null | awk '{print $2}' || true)"
        if [ "$have" != "$UV_VERSION" ]; then uv=(python3 -m uv); fi
        say "uv: installed $UV_VERSION"
    fi
    export UV_PYTHON_DOWNLOADS=never
    cd "$ROOT"
    if [ ! -f uv.lock ]; then
        run_logged uv-lock "${uv[@]}" lock
        say "uv.lock: created (commit it)"
    fi
    local stamp=".venv/.stackyard-sync-stamp"
    if [ -x .venv/bin/python ] && [ -f "$stamp" ] \
        && [ "$stamp" -nt uv.lock ] && [ "$stamp" -nt pyproject.toml ]; then
        say "python env: ok (.venv up to date)"
        return
    fi
    run_logged uv-sync "${uv[@]}" sync --frozen
    touch "$stamp"
    say "python env: synced (.venv)"
}

# ------------------------------------------------------------------- byte code
# Compiled once here, as the image does: where PYTHONDONTWRITEBYTECODE is set (this
# machine sets it) Python never writes byte code, so without this every start of the
# service, of a command and of a test worker compiles everything again (4.5 s -> 1.8 s
# to import the app). Unchanged files are skipped, so a second run takes a moment.
step_bytecode() {
    local stamp=".venv/.stackyard-bytecode-stamp" started=$SECONDS
    cd "$ROOT"
    if [ ! -f "$stamp" ] || [ ".venv/.stackyard-sync-stamp" -nt "$stamp" ]; then
        run_logged compile-venv .venv/bin/python -m compileall -q -j 0 .venv/lib
        touch "$stamp"
    fi
    run_logged compile-src .venv/bin/python -m compileall -q -j 0 src tests bench
    say "byte code: ok ($((SECONDS - started))s)"
}

# ---------------------------------------------------------------------- web UI
step_web() {
    local web="$ROOT/web"
    if [ ! -f "$web/package.json" ]; then
        say "web ui: skipped (no web/package.json yet)"
        return
    fi
    local ci_stamp="$web/node_modules/.stackyard-npm-ci-stamp"
    if [ -f "$ci_stamp" ] && { [ ! -f "$web/package-lock.json" ] || [ "$ci_stamp" -nt "$web/package-lock.json" ]; }; then
        say "web deps: ok (node_modules up to date)"
    else
        if [ -f "$web/package-lock.json" ]; then
            run_logged npm-ci in_dir "$web" npm ci --no-audit --no-fund
        else
            run_logged npm-install in_dir "$web" npm install --no-audit --no-fund
        fi
        touch "$ci_stamp"
        say "web deps: installed (npm)"
    fi
    local build_stamp="$STAMPS/web-build"
    local inputs=() f
    for f in "$web/src" "$web/index.html" "$web/openapi.json" "$web/package.json" \
             "$web/package-lock.json" "$web"/vite.config.* "$web"/tsconfig*.json; do
        [ -e "$f" ] && inputs+=("$f")
    done
    if [ -f "$build_stamp" ] && [ -d "$ROOT/src/stackyard/web" ] \
        && [ -z "$(find "${inputs[@]}" -newer "$build_stamp" -print -quit 2>/dev/null)" ]; then
        say "web build: ok (up to date)"
        return
    fi
    run_logged npm-build in_dir "$web" npm run build
    touch "$build_stamp"
    say "web build: built into src/stackyard/web/"
}

# ------------------------------------------------------------- stackyard image
# The real image from deploy/Dockerfile, built from local base images (nothing can be
# pulled here), for the deployment tests (tests/deploy). Needs the built UI.
step_stackyard_image() {
    "$SCRIPTS/stackyard-image.sh"
}

# ------------------------------------------------------- test OpenID provider
# oidc-provider (Node) for the sign-in tests: tests/support/oidc_provider.py runs
# tests/support/oidc/provider.mjs with these modules.
step_oidc_provider() {
    local dir="$ROOT/tests/support/oidc"
    local stamp="$dir/node_modules/.stackyard-npm-ci-stamp"
    if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then
        say "test oidc provider deps: ok (node_modules up to date)"
        return
    fi
    run_logged npm-ci-oidc in_dir "$dir" npm ci --no-audit --no-fund
    touch "$stamp"
    say "test oidc provider deps: installed (npm)"
}

# -------------------------------------------------------------------- chromium
step_chromium() {
    [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after apt step"
    say "chromium: ok (/usr/bin/chromium)"
}

step_apt
step_compose
step_dockerd
if [ "$WITH_TEST" -eq 1 ]; then
    step_images
fi
step_python
step_bytecode
step_web
if [ "$WITH_TEST" -eq 1 ]; then
    step_stackyard_image
    step_oidc_provider
    step_chromium
fi
say "setup: done in $(( $(date +%s) - START_TS ))s"
