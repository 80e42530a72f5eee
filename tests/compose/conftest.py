from tests.support.service import embedded_database_url

#: Compose tests are about compose, not the database: the embedded default is enough.
database_url = embedded_database_url
