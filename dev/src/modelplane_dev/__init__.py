"""Modelplane developer tooling: benchmarks, the fuzz harness, test helpers, packaging."""
