"""Runs: their typed state (`RunState`), the last run kept per stack and read back
tolerantly, followers. No Docker: the steps are plain coroutines."""

import asyncio
import json
from dataclasses import asdict
from datetime import UTC, datetime

from stackyard.compose.progress import ProgressFold, ProgressLine, ProgressState
from stackyard.stacks.runs import RunBoard, RunState, dump_state, load_state

TODAYS_FILE = {  # what `runs/<stack>.json` held before RunState existed
    "id": "3f2a9c0d1e4b5a67",
    "stack": "web",
    "action": "update",
    "status": "succeeded",
    "started_at": "2025-01-02T03:04:05.123456+00:00",
    "finished_at": "2025-01-02T03:04:09.000001+00:00",
    "exit_code": 0,
    "progress": {
        "mode": "json",
        "percent": 100.0,
        "bytes_done": 3000,
        "bytes_total": 3000,
        "layers_done": 1,
        "layers_total": 1,
        "images": [
            {
                "id": "web",
                "status": "Pulled",
                "percent": 100.0,
                "bytes_done": 3000,
                "bytes_total": 3000,
                "layers_done": 1,
                "layers_total": 1,
            }
        ],
        "containers": [{"id": "Container web-web-1", "status": "Started", "done": True}],
        "lines": [
            {"id": "web", "text": "web Pulled", "level": "info"},
            {"id": None, "text": "a warning", "level": "warning"},
        ],
        "errors": [],
    },
}


def board_with(tmp_path, name: str, content) -> RunBoard:
    board = RunBoard(tmp_path)
    board.runs_dir.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    (board.runs_dir / f"{name}.json").write_text(text)
    return board


def test_a_run_file_of_todays_format_loads_unchanged(tmp_path):
    state = board_with(tmp_path, "web", TODAYS_FILE).last("web")
    assert isinstance(state, RunState)
    assert state.started_at == datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert state.progress.lines[1] == ProgressLine(None, "a warning", "warning")
    assert state.progress.images[0].status == "Pulled"
    # Written back, it reads the same: the file format is the API's JSON.
    assert load_state(dump_state(state), "web") == state
    written = json.loads(json.dumps(dump_state(state)))["progress"]
    assert written == {**TODAYS_FILE["progress"], "stage": None}  # a field added since


def test_missing_fields_take_neutral_values(tmp_path):
    old = {
        "action": "start",
        "exit_code": 1,
        "progress": {"lines": [{"text": "Error: boom"}], "images": [{"id": "web"}]},
    }
    state = board_with(tmp_path, "api", old).last("api")
    assert state is not None
    assert (state.stack, state.action, state.status) == ("api", "start", "failed")
    assert state.exit_code == 1
    assert state.finished_at is None and state.started_at.tzinfo is not None
    assert state.progress.lines == [ProgressLine(None, "Error: boom", "info")]
    assert state.progress.images[0].percent == 0.0
    assert state.progress.percent is None and state.progress.errors == []


def test_extra_fields_are_ignored(tmp_path):
    newer = {
        **TODAYS_FILE,
        "trigger": "schedule",
        "progress": {**TODAYS_FILE["progress"], "eta_seconds": 3},
    }
    state = board_with(tmp_path, "web", newer).last("web")
    assert state is not None and state.id == TODAYS_FILE["id"]
    assert "trigger" not in dump_state(state)


def test_files_that_are_no_run_count_as_no_run(tmp_path):
    assert board_with(tmp_path, "a", "{broken").last("a") is None
    assert board_with(tmp_path, "b", [1, 2]).last("b") is None
    assert board_with(tmp_path, "c", {**TODAYS_FILE, "status": 7}).last("c") is None
    assert RunBoard(tmp_path).last("never") is None


def test_a_finished_run_is_kept_typed_and_followers_see_typed_states(tmp_path):
    async def go():
        board = RunBoard(tmp_path)

        async def steps(run) -> int:
            run.feed_line('{"id": "Container s-web-1", "status": "Started"}')
            return 0

        run = await board.run("s", "start", ProgressFold(), steps)
        followed = [state async for state in board.follow("s")]
        return run, followed

    run, followed = asyncio.run(go())
    assert run.status == "succeeded"
    (last,) = followed
    assert isinstance(last, RunState) and isinstance(last.progress, ProgressState)
    assert last.progress.percent == 100.0
    on_disk = RunBoard(tmp_path).last("s")  # as after a restart
    assert on_disk == last
    assert asdict(on_disk)["progress"]["containers"] == [
        {"id": "Container s-web-1", "status": "Started", "done": True}
    ]
    board = RunBoard(tmp_path)
    board.forget("s")
    assert board.last("s") is None
    assert list(board.runs_dir.iterdir()) == []  # no file, no lock file left behind
