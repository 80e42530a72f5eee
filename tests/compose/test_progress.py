"""The parser and the fold on their own (pure logic); the real compose output is in
test_progress_real.py."""

import json
from dataclasses import asdict

from stackyard.compose.progress import ProgressFold, parse_json_line


def lines(*events: dict) -> list[str]:
    return [json.dumps(e) for e in events]


def test_parses_compose_2_and_5_shapes_alike():
    v2 = parse_json_line(
        '{"id":"abc","parent_id":"web","text":"Downloading",'
        '"status":"[=> ] 1MB/4MB","current":1000000,"total":4000000}'
    )
    v5 = parse_json_line(
        '{"id":"abc","parent_id":"web","status":"Working",'
        '"text":"Downloading","details":"1MB/4MB","current":1000000,"total":4000000}'
    )
    for event in (v2, v5):
        assert (event.id, event.parent_id, event.text) == ("abc", "web", "Downloading")
        assert (event.current, event.total, event.level) == (1000000, 4000000, "info")
    container = parse_json_line('{"id":"Container p-web-1","status":"Started"}')
    assert (container.id, container.text) == ("Container p-web-1", "Started")
    assert parse_json_line("not json") is None
    assert parse_json_line("{broken") is None


def test_errors_and_warnings_are_not_progress():
    fold = ProgressFold()
    for line in lines(
        {"level": "warning", "msg": "version is obsolete", "time": "t"},
        {"id": "Container p-web-1", "status": "Error", "text": "Error", "details": "boom"},
        {"error": True, "message": "pull access denied for x"},
    ):
        fold.feed_line(line)
    fold.finish(1)
    state = asdict(fold.snapshot())
    assert [ln["level"] for ln in state["lines"]] == ["warning", "error", "error"]
    assert "pull access denied for x" in state["errors"]
    assert state["percent"] != 100.0


def test_weighted_bar_bytes_first_then_containers():
    fold = ProgressFold()
    for line in lines(
        {"id": "web", "text": "Pulling"},
        {"id": "l1", "parent_id": "web", "text": "Pulling fs layer"},
        {"id": "l2", "parent_id": "web", "text": "Already exists", "percent": 100},
        {"id": "l1", "parent_id": "web", "text": "Downloading", "current": 500, "total": 1000},
    ):
        fold.feed_line(line)
    half = asdict(fold.snapshot())
    # l1: 500 of 1000; l2 was already there: no download work, no weight.
    assert half["percent"] == round(100 * 0.7 * 500 / 1000, 1)
    assert (half["layers_done"], half["layers_total"]) == (1, 2)
    assert (half["bytes_done"], half["bytes_total"]) == (500, 1000)
    for line in lines(
        {"id": "l1", "parent_id": "web", "text": "Download complete"},
        {"id": "l1", "parent_id": "web", "text": "Extracting", "current": 10, "total": 1000},
        {"id": "l1", "parent_id": "web", "text": "Pull complete"},
        {"id": "web", "text": "Pulled"},
        {"id": "Container p-web-1", "status": "Creating"},
    ):
        fold.feed_line(line)
    pulled = asdict(fold.snapshot())
    assert pulled["percent"] == round(100 * (0.7 + 0.3 * 0.25), 1)
    assert pulled["images"] == [
        {
            "id": "web",
            "status": "Pulled",
            "percent": 100.0,
            "bytes_done": 1000,
            "bytes_total": 1000,
            "layers_done": 2,
            "layers_total": 2,
        }
    ]
    fold.feed_line(json.dumps({"id": "Container p-web-1", "status": "Started"}))
    fold.finish(0)
    assert asdict(fold.snapshot())["percent"] == 100.0


def test_one_line_per_layer_updated_in_place():
    fold = ProgressFold()
    for current in (1, 2, 3):
        fold.feed_line(
            json.dumps(
                {
                    "id": "l1",
                    "parent_id": "web",
                    "text": "Downloading",
                    "status": f"{current}MB/3MB",
                    "current": current,
                    "total": 3,
                }
            )
        )
    fold.feed_line(json.dumps({"id": "Container p-web-1", "status": "Started"}))
    texts = [ln["text"] for ln in asdict(fold.snapshot())["lines"]]
    assert texts == ["l1 Downloading 3MB/3MB", "Container p-web-1 Started"]


def test_text_mode_is_indeterminate_until_the_end():
    fold = ProgressFold(mode="text")
    fold.feed_line("Creating network p_default")
    fold.feed_line("ERROR: something broke")
    state = asdict(fold.snapshot())
    assert state["percent"] is None
    assert [ln["level"] for ln in state["lines"]] == ["info", "error"]
    fold = ProgressFold(mode="text")
    fold.feed_line("Creating p_web_1 ... done")
    fold.finish(0)
    assert asdict(fold.snapshot())["percent"] == 100.0


def test_layers_of_unknown_size_weigh_the_average_known_size():
    fold = ProgressFold(containers_expected=False)
    for line in lines(
        {"id": "l1", "parent_id": "web", "text": "Downloading", "current": 300, "total": 300},
        {"id": "l2", "parent_id": "web", "text": "Pulling fs layer"},
    ):
        fold.feed_line(line)
    assert asdict(fold.snapshot())["percent"] == 50.0


def test_pull_only_bar_is_all_download():
    fold = ProgressFold(containers_expected=False)
    fold.feed_line(
        json.dumps(
            {"id": "l1", "parent_id": "web", "text": "Downloading", "current": 50, "total": 100}
        )
    )
    assert asdict(fold.snapshot())["percent"] == 50.0


def test_output_is_bounded():
    fold = ProgressFold(mode="text", max_lines=10)
    for i in range(100):
        fold.feed_line(f"line {i}")
    texts = [ln["text"] for ln in asdict(fold.snapshot())["lines"]]
    assert texts == [f"line {i}" for i in range(90, 100)]
