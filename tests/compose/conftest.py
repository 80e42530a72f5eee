import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    """Compose tests are about compose, not the database: the embedded default is enough."""
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
