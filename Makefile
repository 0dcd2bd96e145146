# The two commands (see README.md):
#   make demo   set everything up, then run the whole pipeline locally on the sample data
#   make test   set everything up, scan for secrets, check the import layers (docs/architecture.md)
#               and lint and format (ruff), then run the tests against a real local Kafka and Spark
#   make deploy-setup   only what `pulumi up` and the `feedback databricks` commands need
#               (requirements-deploy.txt): .venv with this project, no Spark, JDK, Maven or jars
#               (README.md, "Deploy to Azure"); a later `make test` or `make demo` adds the rest
#   make soak   the sustained-load run, a benchmark-like scenario kept out of `make test` for its
#               time (docs/reliability.md); `make soak ARGS=--long` runs its five-minute variant
# Set-up needs only what the machine ships: Python 3.11, a JDK 17 and Maven.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup deploy-setup demo test soak bench clean

$(BIN)/.installed: requirements.txt requirements-deploy.txt pyproject.toml
	scripts/check-prerequisites.sh python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --editable .
	touch $(BIN)/.deploy-installed $@

$(BIN)/.deploy-installed: requirements-deploy.txt pyproject.toml
	scripts/check-prerequisites.sh python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements-deploy.txt
	$(BIN)/python -m pip install --quiet --no-deps --editable .
	touch $@

setup: $(BIN)/.installed
	scripts/check-prerequisites.sh
	$(BIN)/feedback jars fetch

deploy-setup: $(BIN)/.deploy-installed

demo: setup
	$(BIN)/feedback demo

test: setup
	scripts/check-secrets.sh
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check --no-cache .
	$(BIN)/ruff format --check --no-cache .
	$(BIN)/python -m pytest -n 2 --dist load --durations=30 -m "not soak"

soak: setup
	$(BIN)/python -m pytest -m soak tests/reliability $(ARGS)

bench: setup
	$(BIN)/feedback bench producer

clean:
	-$(BIN)/feedback kafka stop
	rm -rf $(VENV) .cache .state out
