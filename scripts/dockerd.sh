#!/usr/bin/env bash
# Make sure a Docker daemon answers. If `docker info` fails: clean up the pid
# files a killed dockerd/containerd left behind, start dockerd detached from the
# calling shell (it survives it), log to /var/log/stackyard-dockerd.log, and wait
# (bounded) until `docker info` answers.
#
#   scripts/dockerd.sh            DOCKERD_WAIT=60 (seconds) by default
set -euo pipefail

LOG="${DOCKERD_LOG:-/var/log/stackyard-dockerd.log}"
WAIT="${DOCKERD_WAIT:-60}"
PIDFILE=/var/run/docker.pid
CONTAINERD_PIDFILE=/var/run/docker/containerd/containerd.pid

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

LOG_OFFSET=0  # size of $LOG before our start: its tail on failure is from this run

fail() {
    printf 'docker engine: FAILED: %s\n' "$1" >&2
    if [ -f "$LOG" ]; then
        printf -- '--- last lines of %s ---\n' "$LOG" >&2
        tail -c "+$((LOG_OFFSET + 1))" "$LOG" | tail -n 30 >&2
    fi
    exit 1
}

answers() { docker info >/dev/null 2>&1; }

# live PID NAME: PID is a running (not zombie) process whose command is NAME.
live() {
    local pid="$1" name="$2" comm state
    [ -r "/proc/$pid/comm" ] || return 1
    comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
    [ "$comm" = "$name" ] || return 1
    state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1 || true)"
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# alive PID: PID is a process that is not a zombie.
alive() {
    local state
    state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1 || true)"
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# pid_in FILE: the pid written in FILE (empty if none).
pid_in() { tr -dc '0-9' <"$1" 2>/dev/null || true; }

# pid_is NAME PIDFILE: the pid file names a live process whose command is NAME.
pid_is() {
    local pid
    [ -f "$2" ] || return 1
    pid="$(pid_in "$2")"
    [ -n "$pid" ] && live "$pid" "$1"
}

# any_dockerd: some live process named dockerd exists.
any_dockerd() {
    local d
    for d in /proc/[0-9]*; do
        live "${d#/proc/}" dockerd && return 0
    done
    return 1
}

# wait_for_daemon [STARTER_PID]: poll `docker info` for up to $WAIT seconds.
# Returns 0 when it answers, 2 as soon as no live dockerd is left (and the
# starter process, still on its way to exec dockerd, is gone), 1 on timeout.
wait_for_daemon() {
    local deadline=$(( $(date +%s) + WAIT ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if answers; then return 0; fi
        if ! any_dockerd && { [ -z "${1:-}" ] || ! alive "$1"; }; then
            sleep 0.3
            answers && return 0
            return 2
        fi
        sleep 0.5
    done
    return 1
}

if answers; then
    echo "docker engine: ok (already running)"
    exit 0
fi

command -v dockerd >/dev/null 2>&1 || fail "dockerd is not installed: run scripts/setup.sh"

if pid_is dockerd "$PIDFILE"; then
    # A daemon is alive (maybe still starting): give it the same bounded time.
    pid="$(pid_in "$PIDFILE")"
    echo "docker engine: dockerd (pid $pid) is running but not answering yet; waiting"
    rc=0; wait_for_daemon || rc=$?
    case "$rc" in
        0) echo "docker engine: ok (pid $pid)"; exit 0 ;;
        1) fail "dockerd (pid $pid) runs but did not answer within ${WAIT}s; stop it and retry" ;;
        *) echo "docker engine: dockerd (pid $pid) exited; starting a new one" ;;
    esac
fi

if [ -e "$PIDFILE" ]; then
    echo "docker engine: removing stale $PIDFILE"
    "${SUDO[@]}" rm -f "$PIDFILE"
fi
# A containerd child of a killed dockerd may still run: dockerd reuses it. A pid
# file naming anything else (dead, or a reused pid) would confuse dockerd.
if [ -e "$CONTAINERD_PIDFILE" ] && ! pid_is containerd "$CONTAINERD_PIDFILE"; then
    echo "docker engine: removing stale $CONTAINERD_PIDFILE"
    "${SUDO[@]}" rm -f "$CONTAINERD_PIDFILE"
fi

"${SUDO[@]}" mkdir -p "$(dirname "$LOG")"
LOG_OFFSET="$(stat -c %s "$LOG" 2>/dev/null || echo 0)"
printf '\n==== %s scripts/dockerd.sh starting dockerd\n' "$(date -Is)" | "${SUDO[@]}" tee -a "$LOG" >/dev/null
# setsid + nohup: own session, immune to the caller's SIGHUP; stdin from /dev/null.
"${SUDO[@]}" setsid nohup dockerd >>"$LOG" 2>&1 </dev/null &
starter=$!
disown "$starter" 2>/dev/null || true

rc=0; wait_for_daemon "$starter" || rc=$?
case "$rc" in
    0) echo "docker engine: started (pid $(pid_in "$PIDFILE"), log $LOG)" ;;
    1) fail "dockerd did not answer within ${WAIT}s" ;;
    *) fail "dockerd exited during start-up" ;;
esac
