"""Draws a run's progress in the terminal: the same states the console draws."""

from __future__ import annotations

from collections.abc import AsyncIterator

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from stackyard.compose.progress import ProgressLine, ProgressState
from stackyard.sizes import size_text
from stackyard.stacks.runs import RunState


def counter(progress: ProgressState) -> str:
    """ "12.0 MB of 40.0 MB · 2 of 5 layers" (a pull) or "... · 1 of 3 volumes and binds"
    (a backup or a restore)."""
    if not progress.layers_total and not progress.bytes_total:
        return ""
    items = "volumes and binds" if progress.mode == "transfer" else "layers"
    return (
        (f"{progress.stage}: " if progress.stage else "")
        + f"{size_text(progress.bytes_done)} of {size_text(progress.bytes_total)} · "
        + f"{progress.layers_done} of {progress.layers_total} {items}"
    )


def _tail(lines: list[ProgressLine], count: int) -> Text:
    text = Text()
    for line in lines[-count:]:
        style = {"error": "red", "warning": "yellow"}.get(line.level, "")
        text.append(line.text + "\n", style=style)
    return text


async def draw(
    states: AsyncIterator[RunState], console: Console | None = None, tail: int = 20
) -> RunState | None:
    """Follow the states to the end, redrawing bars and output in place; returns the last."""
    console = console or Console(stderr=True)
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
    )
    main: TaskID | None = None
    images: dict[str, TaskID] = {}
    last: RunState | None = None
    with Live(bars, console=console, refresh_per_second=10) as live:
        async for state in states:
            last = state
            progress = state.progress
            if main is None:
                main = bars.add_task(state.action, total=100, info="")
            percent = progress.percent
            bars.update(
                main,
                completed=percent or 0,
                total=None if percent is None else 100,
                info=counter(progress),
            )
            for image in progress.images:
                if image.id not in images:
                    images[image.id] = bars.add_task(f"  {image.id}", total=100, info="")
                bars.update(
                    images[image.id],
                    completed=image.percent,
                    info=f"{image.layers_done}/{image.layers_total} layers",
                )
            live.update(Group(bars, _tail(progress.lines, tail)))
    return last
