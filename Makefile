# torchcourse: two commands get a learner or a developer going.
#   make lab    set up .venv (pinned), then start JupyterLab headless on chapters/
#               (make lab LANG=zh_CN: on the Chinese release, zh_CN/chapters/, with JupyterLab's menus in Chinese)
#   make test   set up .venv (pinned), then run the whole test suite
# Other targets: release, docs, book, book-instructor, grade, class, lock, clean.  Every target is idempotent.

SHELL := /bin/bash
# Debian's python3.11 when present: its venv is readable by the grader's unprivileged sandbox user.
PYTHON ?= $(shell test -x /usr/bin/python3.11 && echo /usr/bin/python3.11 || command -v python3.11)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LAB_PORT ?= 8888
# The language JupyterLab opens the course in: zh_CN when LANG names a Chinese locale (make lab LANG=zh_CN, or a
# zh_CN.UTF-8 desktop), else English. jupyter_lab_config.py reads it as TORCHCOURSE_LAB_LANGUAGE.
LAB_LANGUAGE ?= $(if $(filter zh%,$(LANG)),zh_CN,en)
PYTEST_ARGS ?=
# Two pytest-xdist workers; the tests that must not run beside each other share a group, which
# --dist loadgroup keeps on one worker (tests/conftest.py). PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2
# pip's extra-index warnings about local mirrors are noise, not news.
PIP := $(BIN)/pip --disable-pip-version-check -q
# On Linux, PyPI's torch wheel brings the CUDA libraries (several GB). For PyTorch's CPU-only build
# of the same pinned version: make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
TORCH_PIN := $(shell grep -m1 '^torch==' requirements/lock.txt)

.PHONY: setup lab test release docs vendor book book-instructor grade class lock clean

setup: $(STAMP)

$(STAMP): requirements/lock.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 is required (python3.11 not found)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(if $(TORCH_INDEX),$(PIP) install --index-url $(TORCH_INDEX) "$(TORCH_PIN)")
	$(PIP) install -r requirements/lock.txt 2> >(grep -v 'is ignored' >&2)
	$(PIP) install --no-deps -e . 2> >(grep -v 'is ignored' >&2)
	$(BIN)/python -m torchcourse.setup_check
	@touch $@

lab: $(STAMP)
	@echo "Starting JupyterLab on $(if $(filter zh_CN,$(LAB_LANGUAGE)),zh_CN/chapters/ in Chinese,chapters/) (no browser; open the URL printed below)."
	TORCHCOURSE_LAB_LANGUAGE=$(LAB_LANGUAGE) $(BIN)/jupyter lab --config=jupyter_lab_config.py

test: $(STAMP)
	bash tests/setup-system.sh
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

# chapters/ from solutions/ with nbgrader, then the Chinese release zh_CN/chapters/ from chapters/ and the catalogs
# (the chapters locale/zh_CN/released-chapters.txt lists), each leak-checked (grader/release.py).
release: $(STAMP) docs
	$(BIN)/python -m grader release

# The errata table of docs/syllabus.md, generated from book/errata.yml (the one place an erratum is written).
docs: $(STAMP)
	$(BIN)/python book/errata_table.py

# The site's JavaScript (require.js, the ipywidgets HTML manager, MathJax 3) comes from the npm
# packages pinned in package-lock.json and is copied into book/_vendor (gitignored): pages load
# nothing from a CDN. `npm ci` runs only when the lock changed or node_modules is missing.
NPM_STAMP := node_modules/.package-lock.json
VENDOR_STAMP := book/_vendor/.stamp

$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm is required for the site (Debian: apt-get install -y npm)"; exit 1; }
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $@

$(VENDOR_STAMP): $(NPM_STAMP) book/vendor.py $(wildcard book/js/*.js)
	$(BIN)/python book/vendor.py
	@touch $@

vendor: $(VENDOR_STAMP)

# Learner site over chapters/ in English and Chinese (book/build_site.py): _build/html/en/, _build/html/zh/ (the
# chapters in locale/zh_CN/released-chapters.txt) and _build/html/index.html, which lets the reader choose.
# Executions cached once for both in _build/.jupyter_cache (the code is the same in both editions).
# The Chinese figures need a CJK font (book/install-cjk-font.sh installs Debian's where it runs as root).
book: $(STAMP) $(VENDOR_STAMP)
	bash book/install-cjk-font.sh
	$(BIN)/python book/build_site.py

# Instructor site over solutions/ (solutions shown, hidden tests run but not shown) into _instructor/.
# Its toc is derived from _toc.yml (chapters/ -> solutions/) so the two sites list the same pages.
book-instructor: $(STAMP) $(VENDOR_STAMP)
	$(BIN)/python book/instructor_toc.py _instructor/_toc.yml
	$(BIN)/jupyter-book build . --config _config_instructor.yml --toc _instructor/_toc.yml \
	  --path-output _instructor -W --keep-going

grade: $(STAMP)
	$(BIN)/python -m grader autograde

# A class on JupyterHub, as root on a Debian server: the pinned stack in /opt/torchcourse, the exchange, the hub.
# Settings as variables (make class INSTRUCTOR=ada HUB_IP=0.0.0.0); deploy/setup-class.sh lists them all.
class:
	bash deploy/setup-class.sh

# Regenerate the lock (and environment.yml) from requirements/requirements.in in a throw-away venv.
lock:
	rm -rf .lockvenv && $(PYTHON) -m venv .lockvenv
	.lockvenv/bin/pip install -q -r requirements/requirements.in
	{ head -2 requirements/lock.txt; .lockvenv/bin/pip freeze | sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements/lock.txt.new
	mv requirements/lock.txt.new requirements/lock.txt && rm -rf .lockvenv
	$(PYTHON) requirements/write_environment.py

clean:
	rm -rf $(VENV) _build _instructor node_modules book/_vendor .pytest_cache .ruff_cache submitted autograded feedback reports release instructor exchange
	rm -f gradebook.db .gradebook-sources.json
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
