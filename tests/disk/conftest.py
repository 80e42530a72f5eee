from tests.support.service import embedded_database_url

#: Backup tests are about Docker and files, not the database: the embedded default.
database_url = embedded_database_url
