import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    """Agents are records like any other: their tests run on the embedded default (the
    database layer is tested on both in tests/api)."""
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
