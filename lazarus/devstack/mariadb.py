"""A private MariaDB for slurmdbd, bound to 127.0.0.1 on its own port.

It is started with ``--no-defaults`` so the system's /etc/mysql settings (and
a system server on 3306) never interfere. The first start initialises the
data directory (about 1-2 s); later starts reuse it. The ``slurm`` database
user is created idempotently after every start.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from lazarus.config import DevSettings
from lazarus.devstack.component import Component, port_open
from lazarus.devstack.layout import Layout
from lazarus.devstack.slurm_conf import DB_PASSWORD
from lazarus.errors import DevStackError, shorten

MYSQL_USER = "mysql"


def _datadir(layout: Layout) -> Path:
    return layout.mysql / "data"


def _prepare(layout: Layout) -> None:
    user = pwd.getpwnam(MYSQL_USER)
    layout.mysql.mkdir(parents=True, exist_ok=True)
    os.chown(layout.mysql, user.pw_uid, user.pw_gid)
    layout.mysql_socket.unlink(missing_ok=True)
    if (_datadir(layout) / "mysql").is_dir():
        return
    install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    if install is None:
        raise DevStackError("mariadb-install-db not found: install the mariadb-server package")
    proc = subprocess.run(
        [
            install,
            "--no-defaults",
            f"--user={MYSQL_USER}",
            f"--datadir={_datadir(layout)}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise DevStackError(f"initialising the MariaDB data directory failed: {shorten(proc.stderr or proc.stdout)}")


def _bootstrap(layout: Layout) -> None:
    """Create the slurm user; idempotent, so it runs after every (re)start."""
    sql = "; ".join(
        f"CREATE USER IF NOT EXISTS 'slurm'@'{host}' IDENTIFIED BY '{DB_PASSWORD}'; "
        f"GRANT ALL ON slurm_acct_db.* TO 'slurm'@'{host}'"
        for host in ("127.0.0.1", "localhost")
    )
    client = shutil.which("mariadb") or shutil.which("mysql") or "mariadb"
    proc = subprocess.run(
        [client, "--no-defaults", f"--socket={layout.mysql_socket}", "-uroot", "-e", sql],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise DevStackError(f"creating the slurm database user failed: {shorten(proc.stderr)}")


def mariadb_component(dev: DevSettings, layout: Layout, env: dict[str, str]) -> Component:
    return Component(
        name="mariadb",
        argv=[
            shutil.which("mariadbd") or "/usr/sbin/mariadbd",
            "--no-defaults",
            f"--user={MYSQL_USER}",
            f"--datadir={_datadir(layout)}",
            f"--socket={layout.mysql_socket}",
            f"--pid-file={layout.mysql / 'mariadbd.pid'}",
            "--bind-address=127.0.0.1",
            f"--port={dev.mysql_port}",
            "--skip-name-resolve",
            # Small buffers: this database holds a few thousand rows of test jobs.
            "--innodb-buffer-pool-size=32M",
            "--performance-schema=OFF",
        ],
        env=env,
        port=dev.mysql_port,
        ready=lambda: port_open(dev.mysql_port) and layout.mysql_socket.exists(),
        prepare=lambda: _prepare(layout),
        after_ready=lambda: _bootstrap(layout),
        stop_grace=15.0,
    )
