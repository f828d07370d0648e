"""Node health through NVML: typed snapshots, verdicts, the node agent and its Prometheus metrics.

See docs/node-health.md. ``lazarus node-agent`` (lazarus/cli/node_agent.py) runs it.
"""
