"""What a stack folder's files declare, read without compose (the stack list's reading)."""

import os
from pathlib import Path

import pytest

from stackyard.compose.declared import (
    DeclaredCache,
    interpolate,
    parse_dotenv,
    read_declared,
)
from stackyard.compose.project import fingerprint, normalize_project_name
from stackyard.errors import Invalid


def folder_with(tmp_path: Path, name: str = "app", **files: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file_name, text in files.items():
        (folder / file_name.replace("__", ".").replace("_", "-")).write_text(text)
    return folder


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)


def services(declared) -> dict[str, tuple[str | None, bool]]:
    assert declared.error is None, declared.error
    return {s.name: (s.image, s.builds) for s in declared.project.services}


# -- dotenv ---------------------------------------------------------------------------
def test_dotenv_lines_quotes_comments_and_export():
    text = (
        "# a comment\n"
        "\n"
        "PLAIN=value\n"
        "SPACED = padded  \n"
        "export EXPORTED=yes\n"
        "INLINE=kept # dropped\n"
        "HASH=a#b\n"
        "SINGLE='raw ${PLAIN} # kept'\n"
        'DOUBLE="line\\nnext ${PLAIN}"\n'
        "EMPTY=\n"
        "REF=${PLAIN}-x\n"
        "DEFAULTED=${MISSING:-fallback}\n"
        'MULTI="first\n'
        'second"\n'
        "YAML_STYLE: colon\n"
        "not a line\n"
    )
    env = parse_dotenv(text)
    assert env == {
        "PLAIN": "value",
        "SPACED": "padded",
        "EXPORTED": "yes",
        "INLINE": "kept",
        "HASH": "a#b",
        "SINGLE": "raw ${PLAIN} # kept",
        "DOUBLE": "line\nnext value",
        "EMPTY": "",
        "REF": "value-x",
        "DEFAULTED": "fallback",
        "MULTI": "first\nsecond",
        "YAML_STYLE": "colon",
    }


def test_dotenv_bare_key_inherits_and_the_environment_is_used_for_expansion():
    env = parse_dotenv("HOME\nUNSET\nDIR=${HOME}/x\n", {"HOME": "/root"})
    assert env == {"HOME": "/root", "DIR": "/root/x"}


# -- interpolation --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("$SET", "v"),
        ("${SET}", "v"),
        ("${SET}x$SET", "vxv"),
        ("${UNSET}", ""),
        ("$UNSET-x", "-x"),
        ("${UNSET:-d}", "d"),
        ("${EMPTY:-d}", "d"),
        ("${EMPTY-d}", ""),
        ("${UNSET-d}", "d"),
        ("${SET:-d}", "v"),
        ("${SET:+alt}", "alt"),
        ("${EMPTY:+alt}", ""),
        ("${EMPTY+alt}", "alt"),
        ("${UNSET+alt}", ""),
        ("${UNSET:-${SET}-nested}", "v-nested"),
        ("$$SET", "$SET"),
        ("cost $5", "cost $5"),
        ("img:${TAG:-1.0}", "img:1.0"),
    ],
)
def test_interpolation(text, expected):
    assert interpolate(text, {"SET": "v", "EMPTY": ""}) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${NEED:?give it}", "required variable NEED is missing a value: give it"),
        ("${EMPTY:?}", "required variable EMPTY is missing a value"),
        ("${NEED?x}", "required variable NEED is missing a value: x"),
        ("${", "Invalid template"),
        ("${1x}", "Invalid template"),
        ("${A:x}", "Invalid template"),
    ],
)
def test_interpolation_errors(text, message):
    with pytest.raises(Invalid, match=message.replace("?", r"\?")):
        interpolate(text, {"EMPTY": ""})
    assert interpolate("${EMPTY?x}", {"EMPTY": ""}) == ""


# -- project name ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "normalised"),
    [
        ("web", "web"),
        ("My_Proj", "my_proj"),
        ("My App.v2", "myappv2"),
        ("--_x-y", "x-y"),
        ("Ünïcode", "ncode"),
        ("...", ""),
    ],
)
def test_project_name_is_normalised_as_compose_does(name, normalised):
    assert normalize_project_name(name) == normalised


def test_project_name_precedence(tmp_path):
    folder = folder_with(tmp_path, "Folder_Name", compose__yaml="services:\n  a:\n    image: x\n")
    assert read_declared(folder).project.name == "folder_name"
    write(folder, "compose.yaml", "name: ${N:-From File}\nservices:\n  a:\n    image: x\n")
    assert read_declared(folder).project.name == "fromfile"
    write(folder, ".env", "N=Other\n")
    assert read_declared(folder).project.name == "other"
    write(folder, ".env", "N=Other\nCOMPOSE_PROJECT_NAME=fromenv\n")
    assert read_declared(folder).project.name == "fromenv"
    write(folder, ".env", "COMPOSE_PROJECT_NAME=Bad Name\n")
    assert 'invalid project name "Bad Name"' in read_declared(folder).error


# -- services and images --------------------------------------------------------------
def test_services_images_builds_override_and_profiles(tmp_path):
    folder = folder_with(
        tmp_path,
        compose__yaml=(
            "services:\n"
            "  web:\n    image: ${REG:-docker.io}/web:${TAG}\n"
            "  job:\n    build: .\n"
            "  both:\n    build: ./b\n    image: mine/both:1\n"
            "  debug:\n    image: busybox\n    profiles: [debug]\n"
            "  replaced:\n    image: old\n"
        ),
        compose__override__yml=(
            "services:\n  replaced:\n    image: new:2\n  added:\n    image: added:1\n"
        ),
        __env="TAG=7\n",
    )
    assert services(read_declared(folder)) == {
        "web": ("docker.io/web:7", False),
        "job": (None, True),
        "both": ("mine/both:1", True),
        "replaced": ("new:2", False),
        "added": ("added:1", False),
    }
    assert [s.name for s in read_declared(folder).project.services] == sorted(
        ["web", "job", "both", "replaced", "added"]
    )
    write(folder, ".env", "TAG=7\nCOMPOSE_PROFILES=debug\n")
    assert "debug" in services(read_declared(folder))


def test_compose_picks_its_files_in_its_own_order(tmp_path):
    folder = folder_with(
        tmp_path,
        docker_compose__yaml="services:\n  b:\n    image: b\n",
        docker_compose__yml="services:\n  a:\n    image: a\n",
        compose__override__yaml="services:\n  y:\n    image: y\n",
        compose__override__yml="services:\n  x:\n    image: x\n",
    )
    assert services(read_declared(folder)) == {"a": ("a", False), "x": ("x", False)}


def test_the_environment_wins_over_the_env_file(tmp_path):
    folder = folder_with(
        tmp_path, compose__yaml="services:\n  a:\n    image: ${WHO}\n", __env="WHO=dotenv\n"
    )
    assert services(read_declared(folder, {"WHO": "environment"})) == {"a": ("environment", False)}


@pytest.mark.parametrize(
    ("compose", "message"),
    [
        ("services: [oops", "compose.yaml: Invalid YAML: "),
        ("services:\n  web:\n    image: [not, a, string]\n", "services.web.image must be a string"),
        ("services:\n  web:\n    restart: always\n", "neither an image nor a build context"),
        ("services:\n  web:\n    image: ${IMAGE:?IMAGE is required}\n", "IMAGE is required"),
        ("- a list\n", "the top level must be a mapping"),
        ("", "empty compose file"),
        ("services:\n  a:\n    image: x\n  a:\n    image: y\n", "duplicate key"),
        ("a: &a [*a]\n", "refers to the node that contains it"),
    ],
)
def test_invalid_files_say_why(tmp_path, compose, message):
    declared = read_declared(folder_with(tmp_path, compose__yaml=compose))
    assert declared.project is None
    assert declared.error.startswith("Invalid compose file: ")
    assert message in declared.error


def test_interpolation_error_names_where(tmp_path):
    folder = folder_with(tmp_path, compose__yaml="services:\n  web:\n    image: ${X:?set X}\n")
    assert read_declared(folder).error == (
        "Invalid compose file: error while interpolating services.web.image: "
        "required variable X is missing a value: set X"
    )


def test_include_and_extends_are_marked_incomplete(tmp_path):
    folder = folder_with(
        tmp_path,
        compose__yaml=(
            "include: [other.yaml]\n"
            "services:\n  web:\n    extends: {file: base.yaml, service: base}\n"
        ),
    )
    write(folder, "other.yaml", "services:\n  db:\n    image: db\n")
    write(folder, "base.yaml", "services:\n  base:\n    image: base\n")
    declared = read_declared(folder)
    assert declared.error is None and not declared.complete
    assert [s.name for s in declared.project.services] == ["web"]  # only its own file


def test_nothing_outside_the_folder_is_read(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("LEAK=top-secret\n")
    folder = folder_with(tmp_path, compose__yaml="services:\n  a:\n    image: x${LEAK}\n")
    (folder / ".env").symlink_to(secret)
    declared = read_declared(folder)
    assert declared.project is None and "leaves the stack folder" in declared.error
    assert "top-secret" not in declared.error

    other = folder_with(tmp_path, "other")
    (other / "compose.yaml").symlink_to(secret)
    assert "leaves the stack folder" in read_declared(other).error

    including = folder_with(
        tmp_path, "including", compose__yaml=f"include: [{secret}]\nservices: {{}}\n"
    )
    assert "outside the stack folder" in read_declared(including).error

    env_file = folder_with(
        tmp_path,
        "envfile",
        compose__yaml=f"services:\n  a:\n    image: x\n    env_file: {secret}\n",
    )
    assert "outside the stack folder" in read_declared(env_file).error


def test_a_link_inside_the_folder_is_followed(tmp_path):
    folder = folder_with(tmp_path, real__yaml="services:\n  a:\n    image: x\n")
    (folder / "compose.yaml").symlink_to("real.yaml")
    assert services(read_declared(folder)) == {"a": ("x", False)}


# -- the fingerprint cache ------------------------------------------------------------
def test_cache_reads_a_folder_once_per_state_of_its_files(tmp_path):
    folder = folder_with(tmp_path, compose__yaml="services:\n  a:\n    image: one\n")
    cache = DeclaredCache()
    first = cache.get(folder, fingerprint(folder))
    assert cache.get(folder, fingerprint(folder)) is first
    assert cache.reads == 1

    write(folder, "compose.yaml", "services:\n  a:\n    image: two-longer\n")
    assert services(cache.get(folder, fingerprint(folder))) == {"a": ("two-longer", False)}
    write(folder, ".env", "X=1\n")  # a new input file: read again
    cache.get(folder, fingerprint(folder))
    assert cache.reads == 3

    stamp = fingerprint(folder)
    os.utime(folder / ".env", ns=(1, 1))  # same size, other mtime
    assert fingerprint(folder) != stamp
    cache.retain(set())
    cache.get(folder, fingerprint(folder))
    assert cache.reads == 4
