"""The Docker Engine API, through the Docker SDK: the only package that imports `docker`."""
