"""Benchmarks. Each compares Stackyard against a baseline measured in the same run."""
