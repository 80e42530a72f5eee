# The two commands of the README: `make run` and `make test`.
.PHONY: setup run test test-setup bench openapi lint

setup:
	scripts/setup.sh

run: setup
	.venv/bin/stackyard serve

test-setup:
	scripts/setup.sh --test

test: test-setup
	scripts/test.sh

bench: test-setup
	.venv/bin/python -m bench

openapi: setup
	.venv/bin/stackyard openapi --out web/openapi.json

lint: setup
	scripts/lint.sh
