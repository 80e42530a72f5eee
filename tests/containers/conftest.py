import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    """Container tests are about Docker, not the database: the embedded default is enough."""
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
