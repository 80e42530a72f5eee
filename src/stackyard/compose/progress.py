"""Compose's deploy output, parsed and folded into one weighted progress state.

`--progress json` gives one JSON object per line: image pulls (`id` = service, layers with
`parent_id` = service), layer byte counts (`current`/`total`), containers and other
resources (`id` = "Container p-web-1"), warnings and a final error. The fold turns those
into a bar the console draws: bytes downloaded per layer first, then container steps.
Older tools only give text: the fold keeps the raw lines and an indeterminate bar.

`ProgressState` (with `ImageProgress`, `ContainerProgress`, `ProgressLine`) is the one
typed shape of that state: the API serves it as it is, the CLI draws it, run files keep it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from stackyard.jsonmodel import parse_json

#: Words compose >= 5 puts in `status` (the phase then is in `text`).
_STATUS_WORDS = {"Working", "Done", "Warning", "Error"}
#: Layer phases after which the layer's bytes are all downloaded.
_DOWNLOADED = {
    "Download complete",
    "Verifying Checksum",
    "Extracting",
    "Pull complete",
    "Already exists",
}
_LAYER_DONE = {"Pull complete", "Already exists"}
#: How far a resource is when it reports a status; finished statuses count as whole.
_RESOURCE_STEP = {
    "Creating": 0.25,
    "Created": 0.5,
    "Recreate": 0.25,
    "Recreated": 0.5,
    "Starting": 0.75,
    "Started": 1.0,
    "Running": 1.0,
    "Healthy": 1.0,
    "Waiting": 0.75,
    "Stopping": 0.5,
    "Stopped": 1.0,
    "Removing": 0.5,
    "Removed": 1.0,
    "Restarting": 0.5,
    "Restarted": 1.0,
    "Killing": 0.5,
    "Killed": 1.0,
    "Pulled": 1.0,
    "Skipped": 1.0,
    "Exited": 1.0,
}
#: Share of the bar for pulling when there is something to pull; containers get the rest.
PULL_WEIGHT = 0.7

Level = Literal["info", "warning", "error"]


@dataclass
class ProgressEvent:
    """One parsed line of compose output."""

    id: str | None = None
    parent_id: str | None = None
    text: str = ""  # the phase: "Downloading", "Pull complete", "Started", ...
    detail: str = ""  # the human detail ("[==> ] 3MB/30MB")
    current: int | None = None
    total: int | None = None
    level: Level = "info"
    raw: str = ""


def parse_json_line(line: str) -> ProgressEvent | None:
    """One line of `--progress json` output; None for lines that are not events."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        data: Any = parse_json(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("error") is True:
        return ProgressEvent(text=str(data.get("message", "error")), level="error", raw=line)
    if "level" in data and "msg" in data:
        level: Level = (
            "warning"
            if data["level"] in ("warning", "warn")
            else ("error" if data["level"] in ("error", "fatal") else "info")
        )
        return ProgressEvent(text=str(data["msg"]), level=level, raw=line)
    if data.get("tail"):
        return ProgressEvent(text=str(data.get("text", "")), raw=line)
    status, text = str(data.get("status", "")), str(data.get("text", ""))
    if status in _STATUS_WORDS:  # compose >= 5: status is the state, text the phase
        phase, detail = text, str(data.get("details", ""))
        level = "error" if status == "Error" else ("warning" if status == "Warning" else "info")
    else:  # compose 2.x: text is the phase, status the detail (containers: status only)
        phase, detail = (text, status) if text else (status, "")
        level = "error" if phase == "Error" else "info"
    return ProgressEvent(
        id=data.get("id"),
        parent_id=data.get("parent_id"),
        text=phase,
        detail=detail,
        current=_int(data.get("current")),
        total=_int(data.get("total")),
        level=level,
        raw=line,
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value >= 0 else None


@dataclass
class Layer:
    id: str
    image: str
    phase: str = ""
    current: int = 0
    total: int | None = None
    downloaded: bool = False
    done: bool = False


@dataclass(frozen=True)
class ProgressLine:
    """One line of the raw output; layers and resources replace their line in place."""

    id: str | None
    text: str
    level: Level


@dataclass(frozen=True)
class ImageProgress:
    """The pull of one service's image."""

    id: str
    status: str
    percent: float
    bytes_done: int
    bytes_total: int
    layers_done: int
    layers_total: int


@dataclass(frozen=True)
class ContainerProgress:
    id: str
    status: str
    done: bool


#: json: compose's events; text: its plain output (older tools); transfer: a backup or a
#: restore (bytes and assets, `layers_*` counting assets).
Mode = Literal["json", "text", "transfer"]


@dataclass
class Transfer:
    bytes_done: int = 0
    bytes_total: int = 0
    items_done: int = 0
    items_total: int = 0
    stage: str = ""


@dataclass(frozen=True)
class ProgressState:
    """What the console and the CLI draw: one snapshot of a fold."""

    mode: Mode
    percent: Annotated[float | None, Field(description="null: indeterminate (plain text output)")]
    bytes_done: int
    bytes_total: int
    layers_done: int
    layers_total: int
    images: list[ImageProgress]
    containers: list[ContainerProgress]
    lines: list[ProgressLine]
    errors: list[str]
    stage: Annotated[
        str | None,
        Field(description="A transfer of several passes: the one the counters are of"),
    ] = None

    @classmethod
    def empty(cls, mode: Mode = "json") -> ProgressState:
        return cls(mode, None, 0, 0, 0, 0, [], [], [], [])


@dataclass
class ProgressFold:
    """Folds events (or text lines) into the state the console and the CLI draw."""

    mode: Mode = "json"
    containers_expected: bool = True  # False for a pull: the bar is all download
    max_lines: int = 5000
    layers: dict[str, Layer] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)  # pull id (service) -> phase
    resources: dict[str, float] = field(default_factory=dict)  # "Container x" -> step
    resource_status: dict[str, str] = field(default_factory=dict)
    lines: list[ProgressLine] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    finished: bool = False
    transfer: Transfer = field(default_factory=Transfer)
    _line_index: dict[str, int] = field(default_factory=dict)

    # -- input ------------------------------------------------------------------------
    def feed_line(self, line: str) -> None:
        """A raw output line: parsed in json mode, kept as is in text mode."""
        line = line.rstrip("\r\n")
        if self.mode != "text":  # a transfer's compose steps speak json too
            event = parse_json_line(line)
            if event is not None:
                self.feed(event)
                return
        if line.strip():
            self._put_line(None, line, "error" if _looks_like_error(line) else "info")

    def advance(
        self, bytes_done: int, bytes_total: int, items_done: int, items_total: int, stage: str = ""
    ) -> None:
        """Where a transfer (backup, restore) stands (in which `stage` of it)."""
        self.transfer = Transfer(bytes_done, bytes_total, items_done, items_total, stage)

    def error(self, message: str) -> None:
        """An error of the run itself (compose's final error, or a failure around it)."""
        self.errors.append(message)
        self._put_line(None, message, "error")

    def feed(self, event: ProgressEvent) -> None:
        if event.level == "error" and event.id is None:
            self.error(event.text)
            return
        if event.id is None:
            self._put_line(None, event.text, event.level)
            return
        if event.parent_id is not None:
            self._layer(event)
        elif event.id.split(" ", 1)[0] in ("Container", "Network", "Volume", "Image"):
            self._resource(event)
        else:  # an image pull of a service: "Pulling", "Pulled", "Error"
            self.images[event.id] = event.text
        if event.level == "error":
            self.errors.append(f"{event.id}: {event.detail or event.text}")
        label = f"{event.id} {event.text}" + (f" {event.detail}" if event.detail else "")
        self._put_line(event.id, label, event.level)

    def finish(self, exit_code: int) -> None:
        self.finished = True
        if exit_code != 0 and not self.errors:
            self.errors.append(f"compose exited with status {exit_code}")

    def _layer(self, event: ProgressEvent) -> None:
        layer = self.layers.setdefault(event.id or "", Layer(event.id or "", event.parent_id or ""))
        layer.phase = event.text
        if event.text == "Downloading" and event.total:
            layer.total, layer.current = event.total, min(event.current or 0, event.total)
        if event.text in _DOWNLOADED:
            layer.downloaded = True
            if layer.total:
                layer.current = layer.total
        if event.text in _LAYER_DONE:
            layer.downloaded = layer.done = True

    def _resource(self, event: ProgressEvent) -> None:
        key = event.id or ""
        self.resource_status[key] = event.text
        step = _RESOURCE_STEP.get(event.text)
        if step is not None and key.startswith("Container"):
            self.resources[key] = step

    def _put_line(self, key: str | None, text: str, level: Level) -> None:
        if key is not None and key in self._line_index:
            self.lines[self._line_index[key]] = ProgressLine(key, text, level)
            return
        if len(self.lines) >= self.max_lines:
            dropped = self.lines.pop(0)
            self._line_index = {k: i - 1 for k, i in self._line_index.items() if i > 0}
            if dropped.id is not None:
                self._line_index.pop(dropped.id, None)
        if key is not None:
            self._line_index[key] = len(self.lines)
        self.lines.append(ProgressLine(key, text, level))

    # -- output -----------------------------------------------------------------------
    def snapshot(self) -> ProgressState:
        if self.mode == "transfer":
            return self._transfer_snapshot()
        layers = list(self.layers.values())
        # Layers the engine already had are no download work: they weigh nothing.
        work = [ly for ly in layers if ly.phase != "Already exists"]
        known = [ly.total for ly in work if ly.total]
        fallback = (sum(known) // len(known)) if known else 1
        weights = {ly.id: (ly.total or fallback) if ly in work else 0 for ly in layers}
        done_bytes = {
            ly.id: weights[ly.id] if ly.downloaded else (ly.current if ly.total else 0)
            for ly in layers
        }
        pull = (sum(done_bytes.values()) / sum(weights.values())) if work else None
        containers = (
            (sum(self.resources.values()) / len(self.resources)) if self.resources else None
        )
        return ProgressState(
            mode=self.mode,
            percent=self._percent(pull, containers),
            bytes_done=sum(layer.current for layer in layers if layer.total),
            bytes_total=sum(ly.total or 0 for ly in layers),
            layers_done=sum(1 for layer in layers if layer.done),
            layers_total=len(layers),
            images=[
                self._image(image, [ly for ly in layers if ly.image == image], weights, done_bytes)
                for image in self._image_ids()
            ],
            containers=[
                ContainerProgress(key, self.resource_status.get(key, ""), step >= 1.0)
                for key, step in self.resources.items()
            ],
            lines=list(self.lines),  # ProgressLine is frozen: the list is copied, not its items
            errors=list(self.errors),
        )

    def _transfer_snapshot(self) -> ProgressState:
        t = self.transfer
        if self.finished and not self.errors:
            percent: float | None = 100.0
        elif t.bytes_total:
            percent = round(min(99.9, 100 * t.bytes_done / t.bytes_total), 1)
        elif t.items_total:
            percent = round(min(99.9, 100 * t.items_done / t.items_total), 1)
        else:
            percent = None
        return ProgressState(
            mode="transfer",
            percent=percent,
            bytes_done=t.bytes_done,
            bytes_total=t.bytes_total,
            layers_done=t.items_done,
            layers_total=t.items_total,
            images=[],
            containers=[],
            lines=list(self.lines),
            errors=list(self.errors),
            stage=t.stage or None,
        )

    def _image_ids(self) -> list[str]:
        ids = list(self.images)
        ids += [ly.image for ly in self.layers.values() if ly.image not in ids]
        return list(dict.fromkeys(ids))

    def _image(
        self,
        image: str,
        layers: list[Layer],
        weights: dict[str, int],
        done_bytes: dict[str, int],
    ) -> ImageProgress:
        total = sum(weights[ly.id] for ly in layers)
        done = sum(done_bytes[ly.id] for ly in layers)
        pulled = self.images.get(image) == "Pulled"
        percent = (
            100.0
            if pulled or (layers and all(ly.done for ly in layers))
            else (round(100 * done / total, 1) if total else 0.0)
        )
        return ImageProgress(
            id=image,
            status=self.images.get(image, ""),
            percent=percent,
            bytes_done=sum(ly.current for ly in layers if ly.total),
            bytes_total=sum(ly.total or 0 for ly in layers),
            layers_done=sum(1 for ly in layers if ly.done),
            layers_total=len(layers),
        )

    def _percent(self, pull: float | None, containers: float | None) -> float | None:
        if self.finished and not self.errors:
            return 100.0
        if self.mode == "text":
            return None
        if pull is None:
            value = containers or 0.0
        elif not self.containers_expected:
            value = pull
        else:
            value = PULL_WEIGHT * pull + (1 - PULL_WEIGHT) * (containers or 0.0)
        return round(100 * min(value, 1.0), 1)


def _looks_like_error(line: str) -> bool:
    lowered = line.lower()
    return lowered.startswith(("error", "err ")) or " error " in lowered or "error:" in lowered
