# Goti: `make run` installs and runs Goti; `make test` installs and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint typecheck unit bench protos clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/goti demo

test: lint typecheck unit

BUF := npx --yes @bufbuild/buf@1.75.0

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python proto/build.py --check
	$(BUF) lint
	$(BUF) format -d --exit-code
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec docker-compose.yml

# Regenerate services/goti/api/v1 after editing proto/.
protos: $(BIN)/.installed
	$(BIN)/python proto/build.py

typecheck: $(BIN)/.installed
	$(BIN)/mypy

unit: $(BIN)/.installed
	$(BIN)/pytest

bench: $(BIN)/.installed
	$(BIN)/python bench/perft.py
	$(BIN)/pytest -m slow

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
