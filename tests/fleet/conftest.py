import pytest

from stackyard.settings import Settings
from tests.support.service import embedded_database_url

#: Short, so that the tests of silent agents are quick (the default is 5 s).
AGENT_TIMEOUT = 2.0

#: The fleet's tests are about agents and their answers: the embedded default.
database_url = embedded_database_url


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_timeout": AGENT_TIMEOUT})
