"""Runs the benchmarks: `python -m bench [NAME ...]` (all when no name is given)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

import bench
from bench import common


def available() -> list[str]:
    return sorted(
        m.name.removeprefix("bench_")
        for m in pkgutil.iter_modules([str(Path(bench.__file__).parent)])
        if m.name.startswith("bench_")
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default all: {available()})")
    args = parser.parse_args()
    names = args.names or available()
    unknown = set(names) - set(available())
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; choose from {available()}")
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        print(f"== {name}: {module.__doc__.strip().splitlines()[0]}", flush=True)
        common.CURRENT = name
        module.run()
    print("\n== summary: every figure against its goal", flush=True)
    print(common.summary(common.FIGURES), flush=True)
    missed = sum(f.verdict != "met" for f in common.FIGURES)
    print(f"{len(common.FIGURES) - missed} of {len(common.FIGURES)} met", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
