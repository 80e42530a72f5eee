from tests.support.service import embedded_database_url

#: Stack tests are about Docker, not the database: the embedded default is enough.
database_url = embedded_database_url
