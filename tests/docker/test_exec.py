"""Programs run in a container, against the real engine: to their end, detached, with a
terminal; the engine's refusals as the error tree's types."""

from __future__ import annotations

import socket

import pytest

from stackyard.docker.exec import open_terminal, run, start_detached
from stackyard.errors import Invalid, NotFound
from tests.support.stacks import BUSYBOX
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_program_runs_to_its_end_with_its_environment(docker_client, box):
    command = ["sh", "-c", 'echo "$GREETING"; exit 3']
    assert run(docker_client, box, command, {"GREETING": "hello"}) == (3, "hello\n")


def test_a_detached_program_goes_on_alone(docker_client, box):
    start_detached(docker_client, box, ["sh", "-c", "sleep 0.2; echo done > /flag"])
    wait_until(
        lambda: run(docker_client, box, ["cat", "/flag"], {}) == (0, "done\n"),
        what="the detached program's file",
    )


def test_a_terminal_talks_resizes_and_says_how_its_program_ended(docker_client, box):
    terminal = open_terminal(docker_client, box, ["sh"], {"TERM": "xterm"}, 100, 30)
    try:
        assert isinstance(terminal.sock, socket.socket)
        terminal.sock.setblocking(True)
        terminal.sock.settimeout(30)
        terminal.sock.sendall(b"stty size; echo $((6 * 7))\n")
        seen = b""
        while b"42" not in seen.replace(b"6 * 7", b""):
            seen += terminal.sock.recv(4096)
        assert b"30 100" in seen
        assert terminal.state().running
        terminal.resize(120, 40)
        terminal.sock.sendall(b"stty size; exit 5\n")
        state = wait_until(
            lambda: (s := terminal.state()).exit_code is not None and s, what="the exit"
        )
        assert state.exit_code == 5 and not state.running
    finally:
        terminal.close()


def test_a_missing_container_is_not_found(docker_client):
    with pytest.raises(NotFound, match="Container 000000000000 does not exist"):
        run(docker_client, "0" * 64, ["true"], {})


def test_a_container_that_does_not_run_is_invalid(docker_client, docker_labels):
    stopped = docker_client.containers.create(BUSYBOX, ["true"], labels=docker_labels)
    try:
        with pytest.raises(Invalid, match="The container is not running"):
            start_detached(docker_client, str(stopped.id), ["true"])
    finally:
        stopped.remove(force=True)
