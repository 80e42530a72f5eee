import pytest

from stackyard.settings import Settings

#: Short, so that the tests of silent agents are quick (the default is 5 s).
AGENT_TIMEOUT = 2.0


@pytest.fixture
def database_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_timeout": AGENT_TIMEOUT})
