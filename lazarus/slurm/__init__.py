"""The Slurm adapter: validated commands over a local or SSH transport, typed errors, verified actions.

Start at :class:`lazarus.slurm.client.SlurmClient`; docs/slurm-adapter.md explains the design.
"""
