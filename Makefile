# Goti: `make run` installs and runs Goti; `make test` installs and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF := npx --yes @bufbuild/buf@1.75.0
# The contract as last released: make lint holds proto/ to it with buf breaking.
RELEASED_CONTRACT := proto/released.binpb

.PHONY: run test lint typecheck wheels unit bench protos released-contract web web-check browser clean

# Running Goti needs only its own dependencies; the checks add the development tools. Each
# install has its own stamp, so that neither passes for the other.
INSTALLED := $(BIN)/.installed-goti
DEV_INSTALLED := $(BIN)/.installed-dev

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Goti is two distributions (see pyproject.toml): the server needs goti-client at its own
# version, which is the one in clients/, installed beside it.
$(INSTALLED): pyproject.toml clients/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ./clients -e .
	touch $@

# The development install holds Goti's own install too.
$(DEV_INSTALLED): pyproject.toml clients/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ./clients -e '.[dev]'
	touch $@ $(INSTALLED)

# The whole backend on this machine (an embedded Redis unless GOTI_REDIS_URL is set).
run: $(INSTALLED)
	$(BIN)/goti serve

test: lint typecheck web-check wheels unit

lint: $(DEV_INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python proto/build.py --check
	$(BUF) lint
	$(BUF) format -d --exit-code
	$(BUF) breaking --against $(RELEASED_CONTRACT)
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec docker-compose.yml

# Regenerate clients/goti/api/v1 after editing proto/.
protos: $(DEV_INSTALLED)
	$(BIN)/python proto/build.py

# At a release, in a commit of its own: what proto/ holds now becomes the contract that later
# changes may add to but not break.
released-contract:
	$(BUF) build --exclude-source-info -o $(RELEASED_CONTRACT)

typecheck: $(DEV_INSTALLED)
	$(BIN)/mypy

# Both distributions as they would be published, sdist and wheel each (the wheel built from
# the sdist, so that the sdist is known to hold everything), into dist/; twine checks that
# their metadata would render on PyPI. The sdists leave egg-info in the source folders, which
# an editable install has on sys.path (a second copy of each distribution's metadata): gone.
wheels: $(DEV_INSTALLED)
	rm -rf dist
	$(BIN)/python -m build --quiet --outdir dist clients
	$(BIN)/python -m build --quiet --outdir dist .
	$(BIN)/twine check --strict dist/*
	rm -rf services/goti.egg-info clients/goti_client.egg-info

# The web page's Node packages, from web/package-lock.json.
WEB_DEPS := web/node_modules/.package-lock.json
$(WEB_DEPS): web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $@

# Rebuild services/goti/web/static after editing web/src or proto/.
web: $(WEB_DEPS)
	cd web && npm run build

# The page shipped in the Python package is what web/src and proto/ build.
web-check: $(WEB_DEPS)
	cd web && npm run check

# The browser tests drive Debian's Chromium; install it when it is missing and we may.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	  else echo "the browser tests need Chromium: apt-get install chromium"; exit 1; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium; \
	fi

unit: $(DEV_INSTALLED) $(WEB_DEPS) browser
	$(BIN)/pytest

bench: $(DEV_INSTALLED)
	$(BIN)/python bench/perft.py
	$(BIN)/python bench/referee.py
	$(BIN)/python bench/ai_depth.py
	$(BIN)/python bench/tables.py
	$(BIN)/python bench/matchmaking.py
	$(BIN)/python bench/move_path_floor.py
	$(BIN)/python bench/redis_wait.py
	$(BIN)/python bench/cluster.py
	$(BIN)/pytest -m slow

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache web/node_modules web/src/gen
