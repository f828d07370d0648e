"""Straggler detection from Prometheus throughput metrics (see docs/stragglers.md).

``detector`` is pure (windows in, findings out); ``prometheus`` fetches the
windows; ``rules.yml`` holds the equivalent Prometheus alert/recording rules.
"""
