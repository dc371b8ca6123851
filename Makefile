# The two commands of the README. Each does all set-up first (idempotent): the demo only what the
# demo needs; the tests also their extras and the external agents' images.
.PHONY: setup setup-test demo test bench

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh --test

demo: setup
	python3 -m agentbench run --model demo --task flappy

# One pytest worker per core (pytest-xdist), each test file on one worker: a file's module-scoped
# browser or checker is started once. TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= auto

test: setup-test
	python3 -m ruff check .
	python3 -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: setup
	python3 bench/overhead.py
