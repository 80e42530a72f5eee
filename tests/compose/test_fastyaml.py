"""The libyaml path of the bounded loader: same data, same refusals, hostile input never
reaches libyaml."""

import threading
import time

import pytest

from stackyard.compose import fastyaml
from stackyard.compose.fastyaml import libyaml_safe, load_yaml_all_fast
from stackyard.compose.yaml import MAX_DEPTH, load_yaml_all
from stackyard.errors import Invalid

pytestmark = pytest.mark.skipif(not fastyaml._LIBYAML, reason="PyYAML built without libyaml")


def laughs(levels: int) -> str:
    """Each level ten aliases of the one before: 10**levels nodes once expanded."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


LAUGHS = laughs(7)

DOCUMENTS = [
    "services:\n  web:\n    image: nginx:1\n    ports: ['80:80', 443]\n",
    "x-common: &common\n  restart: always\nservices:\n  a:\n    <<: *common\n    image: a\n",
    "services:\n  a:\n    image: !reset null\n    cmd: !override [sh]\n    on: yes\n",
    "a: 1\n---\nb: [1, {c: d}]\n",
    "key: |\n  multi\n  line\nother: >-\n  folded\n  text\n",
    "n: 0x1f\nf: 1.5e3\nd: 2024-01-02\nnull_value: ~\nempty:\n",
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_same_data_as_the_pure_loader(text):
    assert libyaml_safe(text)
    assert load_yaml_all_fast(text) == load_yaml_all(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: [1, 2\n",
        "a: 1\na: 2\n",
        "a: &a [*a]\n",
        LAUGHS,
        "a: \x07\n",
    ],
)
def test_same_refusals_as_the_pure_loader(text):
    with pytest.raises(Invalid) as pure:
        load_yaml_all(text)
    with pytest.raises(Invalid) as fast:
        load_yaml_all_fast(text)
    assert fast.value.detail.startswith("Invalid YAML: ")
    if "expected" not in pure.value.detail:  # syntax errors are worded by each parser
        assert fast.value.detail.split(" (")[0] == pure.value.detail.split(" (")[0]


def nested(depth: int) -> str:
    return "".join(" " * i + "k:\n" for i in range(depth)) + " " * depth + "v\n"


def test_nesting_beyond_the_bound_is_refused_on_both_paths():
    assert libyaml_safe(nested(MAX_DEPTH + 5))
    with pytest.raises(Invalid, match="nested too deeply"):
        load_yaml_all_fast(nested(MAX_DEPTH + 5))
    assert load_yaml_all_fast(nested(MAX_DEPTH - 5)) == load_yaml_all(nested(MAX_DEPTH - 5))


@pytest.mark.parametrize(
    "text",
    [
        "- " * 100_000 + "x\n",  # would crash libyaml's recursive composer
        "[" * 200_000,  # quadratic in libyaml's scanner
        "a: {" * 50 + "}" * 50 + "\n" + "b: [" * 60 + "]" * 60,
        nested(400),
        "? " * 5000 + "x\n",
    ],
)
def test_hostile_nesting_never_reaches_libyaml(text):
    assert not libyaml_safe(text)
    result: list = []

    def load() -> None:  # in a thread, as the service's requests are
        try:
            load_yaml_all_fast(text)
        except Invalid as exc:
            result.append(exc)

    began = time.monotonic()
    thread = threading.Thread(target=load)
    thread.start()
    thread.join(30)
    assert result and time.monotonic() - began < 30


def test_libyaml_is_faster_on_a_typical_file():
    text = "services:\n" + "".join(
        f"  s{i}:\n    image: registry.local/app{i}:1\n    ports: ['80{i}:80']\n"
        f"    environment:\n      A: b\n    labels: [x=y]\n"
        for i in range(5)
    )

    def timed(load) -> float:
        began = time.perf_counter()
        for _ in range(50):
            load(text)
        return time.perf_counter() - began

    assert timed(load_yaml_all_fast) * 2 < timed(load_yaml_all)
