"""Lazarus: cluster-level recovery for distributed GPU training on Slurm, built on Temporal."""

__version__ = "0.1.0"
