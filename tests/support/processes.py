"""Stopping a server process a test or benchmark started."""

from __future__ import annotations

import subprocess


def stop_process(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """Terminate, and kill if it does not end within `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)
