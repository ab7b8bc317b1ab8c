# The front door: `make demo` and `make test` set themselves up in .venv/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-deps bench serve clean device-check

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

# Two workers (pytest-xdist), one test file each at a time: a file's module fixtures are built once,
# and every worker has its own Prefect home (tests/conftest.py) and temporary folders. Files are handed
# out in collection order, the longest first (tests/conftest.py): xdist's default reorders them by
# number of tests, which started the longest files last, to run alone at the end.
test: $(STAMP) test-deps
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

# System tools the tests start for real, installed only when missing (Debian packages):
# OpenSSH's sshd + ssh-keygen (a loopback test host) and headless Chromium (the report test).
test-deps:
	@test -x /usr/sbin/sshd && command -v ssh-keygen >/dev/null && command -v timeout >/dev/null \
		&& test -x /usr/bin/chromium || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			openssh-server openssh-client coreutils chromium; }

# Synthetic inputs → the real refresh, per-stage timings vs DuckDB alone (docs/benchmark.md).
SCALE ?= default
bench: $(STAMP)
	$(BIN)/python -m bench.run --scale $(SCALE)

# The probe on this machine as a validation runs it; raw output + provenance into DIR (default $$OUT,
# else ./device-check-out). System Python, standard library only: no setup needed (docs/validation.md).
DIR ?=
device-check:
	$(PYTHON) -m bench.device_check $(DIR) $(DEVICE_CHECK_ARGS)

# A local Prefect server + worker with the scheduled refresh deployed (docs/production.md).
serve: $(STAMP)
	deployments/serve.sh

clean:
	rm -rf warehouse .pytest_cache
