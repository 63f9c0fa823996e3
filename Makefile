# Two commands for a newcomer: `make lab` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# JupyterLab refuses to start as root unless told; detect it rather than ask the learner.
ROOT_FLAG := $(shell [ "$$(id -u)" = "0" ] && echo --allow-root)
PORT   ?= 8888

.PHONY: help install lab test unit notebooks bench exercises check-exercises e2e workspace progress classroom clean

help:
	@echo "make lab        start the course in JupyterLab (installs into $(VENV) first)"
	@echo "make test       run unit tests and every notebook (installs first)"
	@echo "make bench      time the suite, each lesson, the import and the widgets"
	@echo "make exercises  regenerate exercises/ from solutions/"
	@echo "make workspace  copy the exercises into DIR=my_work (never overwrites your changes)"
	@echo "make progress   show which exercises in DIR=my_work pass"
	@echo "make classroom  write an nbgrader course source to build/classroom"
	@echo "make e2e        drive a real JupyterLab in headless Chromium"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m course_lib.setup_lab
	@touch $(STAMP)

install: $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --port=$(PORT) --ServerApp.root_dir="$(CURDIR)" notebooks/04_roofline.py

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --nbval-lax tests notebooks solutions

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests

notebooks: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --nbval-lax notebooks solutions

# numba-cuda (the SIMT benchmark's reference) is optional: without it that one ratio is skipped.
bench: $(STAMP)
	-$(BIN)/python -m pip install --quiet -e ".[test,bench]" || echo "numba-cuda not installed: the SIMT-vs-numba ratio will be skipped"
	$(BIN)/python tools/bench.py $(BENCH_ARGS)

exercises: $(STAMP)
	$(BIN)/python -m course_lib.exercises generate

DIR ?= my_work
workspace: $(STAMP)
	$(BIN)/python -m course_lib.exercises workspace $(DIR)

progress: $(STAMP)
	$(BIN)/python -m course_lib.exercises progress $(DIR)

classroom: $(STAMP)
	$(BIN)/python -m course_lib.exercises nbgrader build/classroom

E2E_STAMP := $(VENV)/.installed-e2e
$(E2E_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,e2e]"
	@touch $(E2E_STAMP)

e2e: $(E2E_STAMP)
	$(BIN)/python -m pytest -q -p no:xdist e2e

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
