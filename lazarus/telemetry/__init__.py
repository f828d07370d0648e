"""The cluster-level telemetry loop: one scheduler query per cycle, incremental log tailing, events to workflows."""
