from tests.support.service import embedded_database_url

#: File tests are about the file system: the embedded database is enough.
database_url = embedded_database_url
