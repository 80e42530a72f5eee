pytest_plugins = [
    "tests.support.docker",
    "tests.support.registry",
    "tests.support.images",
    "tests.support.postgres",
    "tests.support.service",
    "tests.support.browser",
    "tests.support.stacks",
    "tests.support.engines",
    "tests.support.peers",
    "tests.support.agents",
    "tests.support.interrupted",
]
