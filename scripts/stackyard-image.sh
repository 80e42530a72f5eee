#!/usr/bin/env bash
# Build the Stackyard image from deploy/Dockerfile on a machine that cannot pull any
# image (the tests deploy it with deploy/compose.yaml). Called by `setup.sh --test`.
#
#   scripts/stackyard-image.sh [TAG]      TAG: stackyard/stackyard:test by default
#
# The Dockerfile's base images become local ones (build arguments):
#   stackyard-test/debian:bookworm       debootstrap --variant=minbase, `docker import`ed
#   stackyard-test/python:3.11-bookworm  PYTHON_IMAGE: Debian's python3 + venv (apt)
#   stackyard-test/docker-bin:1          DOCKER_CLI_IMAGE and COMPOSE_IMAGE: this
#                                        machine's docker CLI and compose plugin
#   stackyard-test/stackyard-wheels      WHEELS_FROM: /wheels made on this machine
#                                        (the locked dependencies' wheels, cached by
#                                        uv.lock, and the project's wheel with the UI
#                                        that setup built), installed with --no-index
# Each image carries the hash of its inputs (label stackyard.test-image.recipe) and is
# rebuilt only when they change: an unchanged tree costs a few seconds.
# Expects the engine, uv, and the built UI (src/stackyard/web): run setup.sh first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPTS="$ROOT/scripts"
LOGDIR="$ROOT/.cache/setup-logs"
CACHE="$ROOT/.cache/stackyard-image"
TAG="${1:-stackyard/stackyard:test}"

DEBIAN_IMAGE=stackyard-test/debian:bookworm
PYTHON_IMAGE=stackyard-test/python:3.11-bookworm
DOCKER_BIN_IMAGE=stackyard-test/docker-bin:1
WHEELS_IMAGE=stackyard-test/stackyard-wheels:build
DEBIAN_MIRROR=http://deb.debian.org/debian
DOCKER_CLI=/usr/local/bin/docker
COMPOSE_PLUGIN=/usr/local/lib/docker/cli-plugins/docker-compose
RECIPE_LABEL=stackyard.test-image.recipe

mkdir -p "$LOGDIR" "$CACHE"
say() { printf '%s\n' "$*"; }
die() { printf 'stackyard-image.sh: ERROR: %s\n' "$*" >&2; exit 1; }

TMPS=()
cleanup() { local d; for d in "${TMPS[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
tmpdir() { local d; d="$(mktemp -d "${TMPDIR:-/tmp}/stackyard-image.XXXXXX")"; TMPS+=("$d"); printf '%s' "$d"; }

# run_logged NAME CMD...: CMD's output goes to $LOGDIR/NAME.log; on failure its tail.
run_logged() {
    local name="$1"; shift
    if ! "$@" >"$LOGDIR/$name.log" 2>&1; then
        printf 'stackyard-image.sh: ERROR: step "%s" failed: %s\n' "$name" "$*" >&2
        printf -- '--- last lines of %s ---\n' "$LOGDIR/$name.log" >&2
        tail -n 40 "$LOGDIR/$name.log" >&2
        exit 1
    fi
}

hash16() { sha256sum | cut -c1-16; }
recipe_of() { docker image inspect -f "{{index .Config.Labels \"$RECIPE_LABEL\"}}" "$1" 2>/dev/null || true; }
image_id() { docker image inspect -f '{{.Id}}' "$1"; }

# fresh IMAGE RECIPE WHAT: say "ok" and succeed when IMAGE already has RECIPE.
fresh() {
    if [ "$(recipe_of "$1")" = "$2" ]; then say "$3 $1: ok (present)"; return 0; fi
    return 1
}

# BuildKit is needed (the Dockerfile's unused stages must be skipped: their public base
# images cannot be pulled). The docker 28 CLI has it only through the buildx plugin;
# Debian's docker.io ships a 20.10 CLI (/usr/bin/docker) that has it built in.
buildkit_docker() {
    if docker buildx version >/dev/null 2>&1; then
        BUILDKIT_DOCKER=(env DOCKER_BUILDKIT=1 docker)
        return
    fi
    local v
    v="$(/usr/bin/docker version -f '{{.Client.Version}}' 2>/dev/null || true)"
    case "$v" in
        18.*|19.*|20.*|21.*|22.*) BUILDKIT_DOCKER=(env DOCKER_BUILDKIT=1 /usr/bin/docker) ;;
        *) die "no docker CLI with BuildKit: neither the buildx plugin nor Debian's /usr/bin/docker 20.10" ;;
    esac
}

# ------------------------------------------------------------------ Debian base
step_debian() {
    local recipe
    recipe="$(printf 'debootstrap --variant=minbase bookworm %s; slim v2' "$DEBIAN_MIRROR" | hash16)"
    DEBIAN_RECIPE="$recipe"
    fresh "$DEBIAN_IMAGE" "$recipe" "base image" && return
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed: run scripts/setup.sh --test"
    local work; work="$(tmpdir)"
    run_logged debootstrap debootstrap --variant=minbase bookworm "$work/root" "$DEBIAN_MIRROR"
    # The python image runs apt-get update itself; the archives are dead weight. As in
    # Debian's slim images, no documentation, manual pages or translations, now or later.
    local r="$work/root"
    rm -rf "$r"/var/cache/apt/* "$r"/var/lib/apt/lists/* \
        "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/*
    cat >"$r/etc/dpkg/dpkg.cfg.d/stackyard-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    tar -C "$work/root" -c . | docker import \
        --change "LABEL stackyard.test-image=1 $RECIPE_LABEL=$recipe" \
        --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >"$LOGDIR/debian-import.log" 2>&1 \
        || { tail -n 20 "$LOGDIR/debian-import.log" >&2; die "docker import of the Debian root failed"; }
    rm -rf "$work"
    say "base image $DEBIAN_IMAGE: built (debootstrap)"
}

# classic_build NAME TAG RECIPE CONTEXT [ARGS...]: a plain (non-BuildKit) build.
classic_build() {
    local name="$1" tag="$2" recipe="$3" ctx="$4"; shift 4
    run_logged "image-$name" env DOCKER_BUILDKIT=0 docker build \
        --label "$RECIPE_LABEL=$recipe" "$@" -t "$tag" "$ctx"
}

step_python_base() {
    local dockerfile="$SCRIPTS/images/python/Dockerfile" recipe
    recipe="$( { printf '%s\n' "$DEBIAN_RECIPE"; cat "$dockerfile"; } | hash16)"
    PYTHON_RECIPE="$recipe"
    fresh "$PYTHON_IMAGE" "$recipe" "base image" && return
    local ctx; ctx="$(tmpdir)"
    cp "$dockerfile" "$ctx/Dockerfile"
    classic_build python "$PYTHON_IMAGE" "$recipe" "$ctx" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"
    say "base image $PYTHON_IMAGE: built (python3 from Debian)"
}

step_docker_bin() {
    local dockerfile="$SCRIPTS/images/docker-bin/Dockerfile" recipe
    [ -x "$DOCKER_CLI" ] || die "$DOCKER_CLI missing"
    [ -x "$COMPOSE_PLUGIN" ] || die "$COMPOSE_PLUGIN missing: run scripts/setup.sh"
    recipe="$(cat "$dockerfile" "$DOCKER_CLI" "$COMPOSE_PLUGIN" | hash16)"
    fresh "$DOCKER_BIN_IMAGE" "$recipe" "base image" && return
    local ctx; ctx="$(tmpdir)"
    cp "$dockerfile" "$ctx/Dockerfile"
    cp "$DOCKER_CLI" "$ctx/docker"
    cp "$COMPOSE_PLUGIN" "$ctx/docker-compose"
    classic_build docker-bin "$DOCKER_BIN_IMAGE" "$recipe" "$ctx"
    say "base image $DOCKER_BIN_IMAGE: built (docker $("$DOCKER_CLI" version -f '{{.Client.Version}}' 2>/dev/null || echo ?), compose $(docker compose version --short 2>/dev/null || echo ?))"
}

# ---------------------------------------------------------------- the wheels
uv_cmd() {
    if command -v uv >/dev/null 2>&1; then UV=(uv); else UV=(python3 -m uv); fi
}

# The locked dependencies' wheels, downloaded once per uv.lock (into .cache).
lock_hash() { cat "$ROOT/uv.lock" "$ROOT/pyproject.toml" | hash16; }
dependency_wheels() {
    local dir
    dir="$CACHE/deps-$(lock_hash)"
    if [ -f "$dir/.complete" ]; then DEPS_DIR="$dir"; return; fi
    rm -rf "$CACHE"/deps-*
    mkdir -p "$dir"
    (cd "$ROOT" && "${UV[@]}" export --frozen --no-dev --no-hashes --no-emit-project \
        -o "$dir/requirements.txt") >"$LOGDIR/uv-export.log" 2>&1 \
        || { tail -n 20 "$LOGDIR/uv-export.log" >&2; die "uv export failed"; }
    # Binary wheels for CPython 3.11 (the image's Python) on this platform.
    run_logged pip-download python3 -m pip download --disable-pip-version-check --no-deps \
        --only-binary=:all: --python-version 3.11 -d "$dir" -r "$dir/requirements.txt"
    touch "$dir/.complete"
    DEPS_DIR="$dir"
}

project_wheel() {
    local out="$1"
    run_logged uv-build in_root "${UV[@]}" build --wheel --out-dir "$out"
}
in_root() { (cd "$ROOT" && "$@"); }

# ------------------------------------------------------------ the Stackyard image
src_hash() {
    (cd "$ROOT" && find src -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum) | hash16
}

step_stackyard() {
    [ -f "$ROOT/src/stackyard/web/index.html" ] || die "the web UI is not built (src/stackyard/web): run scripts/setup.sh"
    local recipe
    recipe="$( {
        cat "$ROOT/deploy/Dockerfile" "$ROOT/uv.lock" "$ROOT/pyproject.toml" "$ROOT/README.md"
        src_hash
        image_id "$PYTHON_IMAGE"
        image_id "$DOCKER_BIN_IMAGE"
    } | hash16)"
    fresh "$TAG" "$recipe" "stackyard image" && return
    local started; started=$(date +%s)
    if [ -n "$PREFETCH" ]; then
        wait "$PREFETCH" || die "downloading the dependencies' wheels failed (see above)"
        PREFETCH=""
    fi
    dependency_wheels
    local wheels; wheels="$(tmpdir)"
    mkdir "$wheels/deps"
    cp "$DEPS_DIR"/*.whl "$DEPS_DIR/requirements.txt" "$wheels/deps/"
    project_wheel "$wheels"
    printf 'FROM scratch\nCOPY . /wheels\n' >"$wheels/Dockerfile"
    printf 'Dockerfile\n' >"$wheels/.dockerignore"
    classic_build wheels "$WHEELS_IMAGE" "$recipe" "$wheels"

    buildkit_docker
    # An empty context: everything the image needs comes from the images above.
    local ctx; ctx="$(tmpdir)"
    local old; old="$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)"
    run_logged image-stackyard "${BUILDKIT_DOCKER[@]}" build --progress plain \
        -f "$ROOT/deploy/Dockerfile" \
        --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" \
        --build-arg "DOCKER_CLI_IMAGE=$DOCKER_BIN_IMAGE" \
        --build-arg "COMPOSE_IMAGE=$DOCKER_BIN_IMAGE" \
        --build-arg "WHEELS_FROM=$WHEELS_IMAGE" \
        --label "$RECIPE_LABEL=$recipe" \
        -t "$TAG" "$ctx"
    docker image rm "$WHEELS_IMAGE" >/dev/null 2>&1 || true
    # BuildKit keeps every build's layers in its cache: bounded, or each change of the
    # code would add a copy of the virtual environment.
    "${BUILDKIT_DOCKER[@]}" builder prune -f --keep-storage 1000MB >/dev/null 2>&1 || true
    # The image this build replaced, unless something still uses it.
    if [ -n "$old" ] && [ "$old" != "$(image_id "$TAG")" ]; then
        docker image rm "$old" >/dev/null 2>&1 || true
    fi
    say "stackyard image $TAG: built in $(( $(date +%s) - started ))s ($(( $(docker image inspect -f '{{.Size}}' "$TAG") / 1000000 )) MB)"
}

docker info >/dev/null 2>&1 || die "no Docker engine answers: run scripts/dockerd.sh"
uv_cmd
# The dependencies' wheels download (network) while debootstrap runs.
PREFETCH=""
if ! [ -f "$CACHE/deps-$(lock_hash)/.complete" ]; then
    dependency_wheels >/dev/null &
    PREFETCH=$!
fi
step_debian
step_python_base
step_docker_bin
step_stackyard
if [ -n "$PREFETCH" ]; then wait "$PREFETCH" || true; fi
