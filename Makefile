# The front door: `make demo` and `make test` set themselves up in .venv/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench serve clean

setup: $(STAMP)

# Reinstall when the dependency declaration or the lock changes.
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "provider-eval needs Python 3.11+, found " + sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/provider-eval refresh
	$(BIN)/provider-eval rank

test: $(STAMP)
	$(BIN)/python -m pytest

# A local Prefect server + worker with the scheduled refresh deployed (docs/production.md).
serve: $(STAMP)
	deployments/serve.sh

clean:
	rm -rf warehouse .pytest_cache
