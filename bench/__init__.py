"""Benchmarks and the synthetic corpus they run on (not installed with kgraph)."""
