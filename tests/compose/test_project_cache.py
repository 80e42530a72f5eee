import json

import pytest

from stackyard.compose.probe import ComposeTool, compose_tool
from stackyard.compose.project import ProjectCache
from stackyard.errors import Invalid
from tests.support.stacks import compose_text, service

NO_COMPOSE = ComposeTool(("false",), "0.0.0", False)  # fails if it is ever run


def test_resolved_projects_survive_a_restart_until_a_file_changes(tmp_path):
    folder = tmp_path / "web"
    folder.mkdir()
    (folder / "compose.yaml").write_text(compose_text(web=service(), db=service()))
    first = ProjectCache(compose_tool, path=tmp_path / "projects.json")
    project = first.get(folder)
    assert [s.name for s in project.services] == ["db", "web"]
    first.flush()

    restarted = ProjectCache(lambda: NO_COMPOSE, path=tmp_path / "projects.json")
    assert restarted.get(folder) == project  # no compose run needed

    (folder / ".env").write_text("X=1\n")  # an input changed: it is resolved again
    with pytest.raises(Invalid, match="Invalid compose file"):
        restarted.get(folder)


def test_entries_resolved_by_an_older_version_are_resolved_again(tmp_path):
    """Before the minimal environment, a cached project could hold the service's own
    variables: such entries are not trusted after an upgrade."""
    folder = tmp_path / "web"
    folder.mkdir()
    (folder / "compose.yaml").write_text(compose_text(web=service()))
    first = ProjectCache(compose_tool, path=tmp_path / "projects.json")
    first.get(folder)
    first.flush()
    entries = json.loads((tmp_path / "projects.json").read_text())
    for entry in entries:
        del entry["v"]
        entry["config"]["services"]["web"]["image"] = "leaked-secret"
    (tmp_path / "projects.json").write_text(json.dumps(entries))

    restarted = ProjectCache(compose_tool, path=tmp_path / "projects.json")
    assert restarted.cached(folder) is None
    assert restarted.get(folder).services[0].image == "stackyard-test/busybox:1"
