# The two commands of the README. Each does all set-up first (idempotent).
.PHONY: setup demo test bench

setup:
	bash scripts/setup.sh

demo: setup
	python3 -m agentbench run --model demo --task flappy

test: setup
	python3 -m pytest

bench: setup
	python3 bench/overhead.py
