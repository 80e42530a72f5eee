"""The self-update helper's program: `python -m stackyard.system.update_helper`, run in
a detached container made from the service's own image (so it outlives the service
container it replaces). It pulls the service's image and recreates the service with its
own compose project, files and environment, then writes what happened where the new
process reads it (the service's data folder, mounted at the same place).

Only the standard library: it starts in a moment and needs nothing of the service."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

#: Time for the old service to answer the request that started the update.
GRACE_SECONDS = 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stackyard.system.update_helper")
    parser.add_argument("--project", required=True)
    parser.add_argument("--project-directory", required=True)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--env-file", action="append", default=[])
    parser.add_argument("--service", required=True)
    parser.add_argument("--from-version", required=True)
    parser.add_argument("--to-version", required=True)
    parser.add_argument("--result", required=True, type=Path)
    args = parser.parse_args(argv)

    compose = [
        "docker",
        "compose",
        "-p",
        args.project,
        "--project-directory",
        args.project_directory,
    ]
    for file in args.file:
        compose += ["-f", file]
    for env_file in args.env_file:
        compose += ["--env-file", env_file]
    time.sleep(GRACE_SECONDS)
    output: list[str] = []
    status = "succeeded"
    for step in (
        ["pull", args.service],
        ["up", "-d", "--no-deps", "--force-recreate", args.service],
    ):
        done = subprocess.run([*compose, *step], capture_output=True, text=True, env=os.environ)
        output.append(f"$ docker compose {' '.join(step)}\n{done.stdout}{done.stderr}")
        if done.returncode != 0:
            status = "failed"
            break
    result = {
        "status": status,
        "from_version": args.from_version,
        "to_version": args.to_version,
        "finished_at": datetime.now(UTC).isoformat(),
        "output": "".join(output)[-8000:],
    }
    temporary = args.result.with_name(args.result.name + ".tmp")
    temporary.write_text(json.dumps(result))
    temporary.replace(args.result)
    return 0 if status == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(main())
