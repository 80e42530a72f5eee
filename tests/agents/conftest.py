from tests.support.service import embedded_database_url

#: Agents are records like any other: their tests run on the embedded default (the
#: database layer is tested on both in tests/api).
database_url = embedded_database_url
