"""Lazarus vs Slurm alone on the same faults (``benchmarks/compare.py``): the stack, the faults, the measures."""
