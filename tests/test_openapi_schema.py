from pathlib import Path

from stackyard.app import openapi_text

COMMITTED = Path(__file__).resolve().parents[1] / "web" / "openapi.json"


def test_committed_schema_matches_the_api():
    """The UI's typed client is generated from web/openapi.json; `make openapi` refreshes it."""
    assert COMMITTED.read_text() == openapi_text(), "web/openapi.json is stale: run `make openapi`"
