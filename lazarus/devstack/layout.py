"""Where the embedded stack keeps its files, all under one state directory.

Everything the stack writes lives below ``DevSettings.state_dir``: configuration
(``etc/``), pid files (``run/``), daemon logs (``log/``), Slurm state and spool,
the private munge key and socket, the MariaDB data directory, the fake GPU device
nodes and the Temporal SQLite file. Nothing is written under ``/etc``: clients
find the cluster through ``SLURM_CONF``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Environment variable set on every daemon the stack starts. Its value is the
# state directory, so a pid file is only trusted when the process it names
# carries this marker (pid reuse cannot make us kill a stranger).
MARKER_ENV = "LAZARUS_DEVSTACK"


@dataclass(frozen=True)
class Layout:
    """Paths of one stack instance, derived from its state directory."""

    root: Path

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def log(self) -> Path:
        return self.root / "log"

    @property
    def spool(self) -> Path:
        return self.root / "spool"

    @property
    def ctld_state(self) -> Path:
        return self.root / "state" / "ctld"

    @property
    def munge(self) -> Path:
        return self.root / "munge"

    @property
    def munge_socket(self) -> Path:
        return self.munge / "munge.socket"

    @property
    def mysql(self) -> Path:
        return self.root / "mysql"

    @property
    def mysql_socket(self) -> Path:
        return self.mysql / "mysqld.sock"

    @property
    def gpu_dev(self) -> Path:
        return self.root / "dev"

    @property
    def slurm_conf(self) -> Path:
        return self.etc / "slurm.conf"

    @property
    def temporal_db(self) -> Path:
        return self.root / "temporal.db"

    @property
    def lazarus_yaml(self) -> Path:
        return self.root / "lazarus.yaml"

    @property
    def notices(self) -> Path:
        """The dev inbox's notices, one JSON line each (:mod:`lazarus.devstack.inbox`)."""
        return self.root / "notices.jsonl"

    @property
    def lock_file(self) -> Path:
        return self.root / ".lock"

    def pid_file(self, component: str) -> Path:
        return self.run / f"{component}.pid"

    def log_file(self, component: str) -> Path:
        return self.log / f"{component}.log"

    def create_dirs(self) -> None:
        for d in (self.etc, self.run, self.log, self.spool, self.ctld_state, self.gpu_dev):
            d.mkdir(parents=True, exist_ok=True)
