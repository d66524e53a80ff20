# Two commands on a fresh machine with Python 3.11: `make demo`, `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat setup.cfg pyproject.toml setup.py | cksum | cut -d' ' -f1)

.PHONY: demo test test-slow wheel bench validate validate-fast envelopes lint clean venv

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# what `make test` and `make demo` need: the test, plot, sim, notebooks and
# dist extras (`pip install -e ".[all]"` has everything)
# (then the simulator's machine code goes into numba's cache, once: the first
# simulation of `make demo` starts at full speed)
$(STAMP): $(BIN)/python setup.cfg pyproject.toml setup.py
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test,plot,sim,notebooks,dist]"
	$(BIN)/qmodels warm-up
	rm -f $(VENV)/.installed-*
	touch $@

venv: $(STAMP)

# The SPAX case study: paper-vs-model table on the terminal, report and
# plots (analytic and simulated) in build/demo/
demo: $(STAMP)
	$(BIN)/qmodels demo --out build/demo

# The default run: lint (ruff with the complexity limit; the import-rule
# test is part of the suite), then unit, property, reference-value, doctest,
# CLI, case-study and notebook tests.  Slow statistical runs are opt-in:
# `make test-slow`.
test: $(STAMP)
	$(BIN)/ruff check qmodels tests validation benchmarks derivations
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow" --doctest-modules qmodels tests

test-slow: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -m slow tests

# A wheel that ships the simulator's machine code (qmodels/_kernels, built for
# the generic CPU of this architecture; see setup.py), in dist/; compiled here,
# never copied from a QMODELS_SHIP_FROM left set in the shell
wheel: $(STAMP)
	rm -rf build/lib
	QMODELS_SHIP_FROM= QMODELS_AOT=require $(BIN)/python -m pip wheel --quiet --no-build-isolation --no-deps \
		-w dist .

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet ".[bench]"
	bash benchmarks/setup_peers.sh $(BIN)/python
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks.bench_coldstart --wheel

# Analysis against simulation and the CTMC over the validation catalog;
# the report lands in build/validation/report.md, then every approximation
# measured over its catalogs against the committed error table
# (build/validation/envelopes_drift.md; status 1 if it moved).  Spread it with
# `make validate VALIDATE_ARGS="--workers 4"` (or "--scheduler tcp://host:8786").
VALIDATE_ARGS ?=
validate: $(STAMP)
	$(BIN)/python -m validation --out build/validation $(VALIDATE_ARGS)
	$(BIN)/python -m validation.envelopes --out build/validation $(VALIDATE_ARGS)

validate-fast: $(STAMP)
	$(BIN)/python -m validation --out build/validation --fast
	$(BIN)/python -m validation.envelopes --out build/validation --quick

# Measure every approximation's error envelope again and write the
# committed table (qmodels/analytic/envelopes.json, the README's table).
envelopes: $(STAMP)
	$(BIN)/python -m validation.envelopes --write $(VALIDATE_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check qmodels tests validation benchmarks derivations
	$(BIN)/python -m pytest -q tests/test_layers.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
