"""Retrieval and latency benchmarks (run from the repo root: .venv/bin/python bench/locomo.py)."""
