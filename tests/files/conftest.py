import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    """File tests are about the file system: the embedded database is enough."""
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
