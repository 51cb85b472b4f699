# Goti: `make run` installs and runs Goti; `make test` installs and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF := npx --yes @bufbuild/buf@1.75.0
# The contract as last released: make lint holds proto/ to it with buf breaking.
RELEASED_CONTRACT := proto/released.binpb

.PHONY: run test lint typecheck wheels compiled unit unit-compiled tests-compiled master-tables bench protos released-contract web web-check browser clean

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

# The checks that read or build the tree run two at a time (each keeps about one core busy),
# then the tests alone, so that nothing else competes with the servers they start.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint typecheck web-check compiled
	@$(MAKE) --no-print-directory unit tests-compiled

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
# The wheels are compiled with a C compiler, else pure Python (clients/mypyc_build.py;
# GOTI_PURE_PYTHON=1 forces it): each build's log is kept in build/wheels/, its `goti build:`
# lines shown, and the last lines say which build each wheel is.
WHEEL_LOGS := build/wheels
build_distribution = $(BIN)/python -m build --outdir dist $(1) >$(WHEEL_LOGS)/$(2) 2>&1 \
	|| { cat $(WHEEL_LOGS)/$(2); exit 1; }; grep '^goti build:' $(WHEEL_LOGS)/$(2) | awk '!seen[$$0]++'
wheels: $(DEV_INSTALLED)
	rm -rf dist $(WHEEL_LOGS)
	mkdir -p $(WHEEL_LOGS)
	@$(call build_distribution,clients,goti-client.log)
	@$(call build_distribution,.,goti.log)
	$(BIN)/twine check --strict dist/*
	rm -rf services/goti.egg-info clients/goti_client.egg-info
	@$(BIN)/python clients/mypyc_build.py dist/*.whl

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

# The tests mostly wait on the servers they start (about half a core each, one after another):
# two workers, each taking whole files, about halve the time. TEST_WORKERS=0 runs them in this
# process alone.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile
unit: $(DEV_INSTALLED) $(WEB_DEPS) browser
	$(PYTEST)

# The wheels as built, unpacked where the compiled test run imports Goti from: with a C
# compiler, their rules and search modules are mypyc's (clients/mypyc_build.py).
COMPILED := build/mypyc
compiled: wheels
	rm -rf $(COMPILED)
	for wheel in dist/*.whl; do $(BIN)/python -m zipfile -e $$wheel $(COMPILED); done
	rm -rf $(COMPILED)/*.dist-info

# The tests of the compiled modules, run again on them: the rules (perft against the published
# counts among them), the search, the levels, the evaluation, the line protocol and the
# referee's games;
# tests/ai/test_compiled_kernel.py fails if some are not compiled after all. Wheels built
# without a compiler are pure Python: nothing to run again, and make test goes on.
COMPILED_TESTS := tests/rules tests/ai/test_compiled_kernel.py tests/ai/test_search.py \
	tests/ai/test_player.py tests/ai/test_evaluation.py tests/ai/test_engine.py \
	tests/ai/test_endgame_moves.py tests/ai/test_search_tables.py tests/referee/test_referee_games.py
unit-compiled: compiled
	@$(MAKE) --no-print-directory tests-compiled

# The compiled run on the wheels unpacked already (make compiled).
tests-compiled:
	@if [ "$$GOTI_PURE_PYTHON" = 1 ]; then echo "GOTI_PURE_PYTHON=1: no compiled modules to test"; \
	elif [ -z "$$(find $(COMPILED)/goti -name '*.so' -print -quit)" ]; then \
		echo "the wheels are pure Python (make wheels said why above): no compiled modules to test"; \
	else GOTI_TEST_COMPILED=$(COMPILED) $(PYTEST) $(COMPILED_TESTS); fi

# Master's five-piece endgame tables, not shipped (45 MB for both variants; about an hour of
# wall time on two cores), solved on the compiled rules where the machine can compile them.
# Then: GOTI_AI_MASTER_ENDGAMES=$(MASTER_TABLES) make run.
MASTER_TABLES ?= $(HOME)/.local/share/goti/endgames
master-tables: compiled
	PYTHONPATH=$(COMPILED) $(BIN)/goti endgames build --variant both --pieces 5 \
		--jobs $$(nproc) --out $(MASTER_TABLES)

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
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache web/node_modules web/src/gen build/mypyc $(WHEEL_LOGS)
