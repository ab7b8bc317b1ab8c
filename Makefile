# The front door: `make demo` and `make test` set themselves up in .venv/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-deps bench clean

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
	$(BIN)/provider-eval report --out warehouse/report.html

test: $(STAMP) test-deps
	$(BIN)/python -m pytest

# The report test renders the page in Debian's headless Chromium; install it only when missing.
test-deps:
	@test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)

clean:
	rm -rf warehouse .pytest_cache
