import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    """Backup tests are about Docker and files, not the database: the embedded default."""
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
