"""Typed models for every boundary (workflows, activities, CLI, config).

These modules import nothing heavy: the Temporal workflow sandbox re-imports them.
"""
