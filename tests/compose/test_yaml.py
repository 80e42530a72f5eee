"""The service's one YAML loader: safe, and bounded against alias bombs and deep nesting."""

import time

import pytest

from stackyard.compose.yaml import MAX_BYTES, load_yaml, load_yaml_all
from stackyard.errors import Invalid


def billion_laughs() -> str:
    """The classic: 470 bytes that stand for 10^9 strings."""
    lines = ['x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"x-{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    lines.append("services:\n  web:\n    image: busybox\n    labels:\n      x: *i")
    return "\n".join(lines) + "\n"


BOMB = billion_laughs()
SELF_MERGE = "x-a: &a\n  <<: *a\nservices:\n  web:\n    image: busybox\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BOMB, "too many YAML aliases"),
        (SELF_MERGE, "refers to the node that contains it"),
        ("a: &a [*a]\n", "refers to the node that contains it"),
        ("x: &x 1\nl: [" + ",".join(["*x"] * 1500) + "]\n", "too many YAML aliases"),
        ("a: " + "[" * 400_000 + "]" * 400_000, "nested too deeply"),
        ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 1400)), "nested too deeply"),
    ],
    ids=["billion-laughs", "self-merge", "recursive", "many-aliases", "deep-flow", "deep-block"],
)
def test_bombs_are_refused_promptly(text, message):
    started = time.monotonic()
    with pytest.raises(Invalid, match=message):
        load_yaml(text)
    assert time.monotonic() - started < 2


def test_ordinary_anchors_merges_and_compose_tags_load():
    text = (
        "x-defaults: &defaults\n  restart: always\n  labels: [a=b]\n"
        "services:\n"
        + "".join(f"  s{i}:\n    <<: *defaults\n    image: busybox\n" for i in range(50))
        + "  reset:\n    image: busybox\n    ports: !reset []\n"
        + "  override:\n    image: busybox\n    env_file: !override [a.env]\n"
    )
    data = load_yaml(text)
    assert data["services"]["s49"] == {"restart": "always", "labels": ["a=b"], "image": "busybox"}
    assert data["services"]["reset"]["ports"] == []
    assert data["services"]["override"]["env_file"] == ["a.env"]


def test_only_plain_data_is_built():
    assert load_yaml("a: !!python/object/apply:os.system ['true']\n") == {"a": ["true"]}


def test_errors_say_where_without_quoting_the_file():
    with pytest.raises(Invalid) as caught:
        load_yaml("secret: hunter2-value\nb: [\n")
    assert "line" in caught.value.detail and "hunter2" not in caught.value.detail


def test_documents_size_and_odd_input():
    assert load_yaml_all("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
    assert load_yaml("") is None
    with pytest.raises(Invalid, match="too large"):
        load_yaml("a: b\n" * (MAX_BYTES // 5 + 1))
    with pytest.raises(Invalid, match="unacceptable character"):
        load_yaml("a: \x00\n")


def test_duplicate_keys_are_refused_but_merged_keys_may_be_overridden():
    with pytest.raises(Invalid, match="duplicate key 'include'"):
        load_yaml("include: [/etc/passwd]\nservices: {}\ninclude: []\n")
    assert load_yaml("x: &x {a: 1}\ny:\n  <<: *x\n  a: 2\n") == {"x": {"a": 1}, "y": {"a": 2}}
