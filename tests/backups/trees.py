"""Data of every kind a backup must keep, written into a volume or a host folder through
a helper container, and a snapshot of a tree to compare after a restore: per entry its
type, mode, owner, group, modification time (whole seconds), link target, link count and
the SHA-256 of its content (how restic and borg prove a restore)."""

from __future__ import annotations

import subprocess

BUSYBOX = "stackyard-test/busybox:1"
LONG = "l" * 120

#: Builds the tree in /data (run as root in a helper).
MAKE = f"""
set -e
cd /data
mkdir -p dir/sub empty "nön-ascii ✓" ro-dir deep/{LONG}/{LONG}
echo hello > dir/file
echo deep > deep/{LONG}/{LONG}/{LONG}.txt
echo "grüße" > "nön-ascii ✓/ünïcödé.txt"
echo setuid > suid && chmod 4755 suid
echo in > ro-dir/in && chmod 0555 ro-dir
echo owned > owned && chown 100000:200000 owned
echo app > app-owned && chown 999:999 app-owned && chown 999:999 dir/sub
chmod 0700 dir/sub
ln -s dir/file rel-link
ln -s /etc/passwd abs-link
ln -s missing dangling
echo hard > hard1 && ln hard1 hard2
head -c 100000 /dev/urandom > random.bin
truncate -s 64M sparse && printf end >> sparse
mkfifo fifo
touch -d @1600000000 dir/file random.bin
touch -d @1500000000 dir empty
"""

#: One line per entry: path|type|mode|uid|gid|mtime|links|link target, then its hash.
SNAPSHOT = r"""
cd /data
find . | sort | while IFS= read -r p; do
  s=$(stat -c '%F|%a|%u|%g|%Y|%h' "$p")
  t=""; [ -L "$p" ] && t=$(readlink "$p")
  h=""; [ -f "$p" ] && [ ! -L "$p" ] && h=$(sha256sum "$p" | cut -c1-64)
  echo "$p|$s|$t|$h"
done
"""


def _mount(kind: str, source: str) -> list[str]:
    return ["--mount", f"type={kind},source={source},target=/data"]


def helper(kind: str, source: str, script: str) -> str:
    done = subprocess.run(
        ["docker", "run", "--rm", *_mount(kind, source), BUSYBOX, "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_tree(kind: str, source: str) -> None:
    helper(kind, source, MAKE)


def snapshot(kind: str, source: str) -> dict[str, str]:
    """Every entry of the tree (the root's own metadata too, as `.`)."""
    lines = helper(kind, source, SNAPSHOT).splitlines()
    return {line.split("|", 1)[0]: line.split("|", 1)[1] for line in lines}
