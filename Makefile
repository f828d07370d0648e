# Lazarus: `make demo` and `make test` on a fresh Debian 12 machine, as root.
#   make deps   Debian packages (Slurm, munge, MariaDB, Prometheus, sshd, chromium, ...) and helm
#   make venv   .venv with Lazarus installed editable, test extras included
#   make demo   deps + venv + `lazarus dev up` + `lazarus demo`
#   make test   deps + venv + ruff (lint, format), mypy, then the whole test suite
#   make down   stop the embedded stack
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: deps venv demo test down

deps:
	bash scripts/install-system-deps.sh

# Reinstall only when the dependencies change (pip takes tens of seconds).
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: deps venv
	$(VENV)/bin/lazarus dev up
	@if $(VENV)/bin/python -c 'import lazarus.cli.demo' 2>/dev/null; then \
		$(VENV)/bin/lazarus demo; \
	else \
		echo "The stack is up. Temporal UI: $$($(VENV)/bin/lazarus dev status --json | $(VENV)/bin/python -c 'import json,sys; print(json.load(sys.stdin)["ui_url"])')"; \
		echo 'Use it from a shell with: eval "$$($(VENV)/bin/lazarus dev env)"'; \
	fi

test: deps venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy lazarus workflows activities workers
	$(VENV)/bin/pytest -q -p no:cacheprovider -rsR --reruns 1 -n 3 tests/

down:
	$(VENV)/bin/lazarus dev down
