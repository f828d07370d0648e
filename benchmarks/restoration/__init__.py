"""Fault → progress restored on a full cluster (``benchmarks/restore.py``): the stack, the workload, the measures."""
