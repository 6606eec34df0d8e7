# Two commands do everything on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
TOOL   := $(VENV)/bin/autotune-rewrite
EXAMPLE := examples/sm120_mla_decode
# pytest-xdist workers; `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= auto

.PHONY: setup demo test clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[interp,test]'
	touch $@

demo: setup
	TOOL=$(TOOL) EXAMPLE=$(EXAMPLE) bash scripts/demo.sh

test: setup
	$(PY) -m pytest -q -n $(PYTEST_WORKERS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .pytest-autotune-cache
