"""Debian packages the stack needs, installed with apt when we are root.

Package post-install scripts would start the *system* munge, slurmctld and
MariaDB, which then hold the default ports and sockets. A temporary
``/usr/sbin/policy-rc.d`` that exits 101 tells them not to. Another apt run
holding the dpkg lock is waited for (``DPkg::Lock::Timeout``), not failed on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loguru import logger

from lazarus.errors import DevStackError, shorten

SLURM_PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client")
ACCOUNTING_PACKAGES = ("slurmdbd", "slurm-wlm-mysql-plugin", "mariadb-server")
POLICY_RC_D = Path("/usr/sbin/policy-rc.d")
APT_LOCK_TIMEOUT_S = 300


def missing_packages(names: tuple[str, ...] | list[str]) -> list[str]:
    """Those of ``names`` that dpkg does not report as installed."""
    proc = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *names],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    installed = {line.split()[0] for line in proc.stdout.splitlines() if line.endswith(" installed")}
    return [n for n in names if n not in installed]


def ensure_packages(names: list[str]) -> list[str]:
    """Install what is missing (root) or explain the command to run (non-root); return what was installed."""
    missing = missing_packages(names)
    if not missing:
        return []
    command = "apt-get install -y " + " ".join(missing)
    if os.geteuid() != 0:
        raise DevStackError(f"missing Debian packages {', '.join(missing)}; as root run: {command}")
    logger.info("installing {}", " ".join(missing))
    with _services_blocked():
        proc = _apt(["install", "-y", *missing])
        if proc.returncode != 0:
            # A fresh machine often has no package lists yet.
            _apt(["update"])
            proc = _apt(["install", "-y", *missing])
    if proc.returncode != 0:
        raise DevStackError(f"`{command}` failed: {shorten(proc.stderr.strip(), 400)}")
    return missing


def _apt(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(
        ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_TIMEOUT_S}", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )


@contextmanager
def _services_blocked() -> Iterator[None]:
    if POLICY_RC_D.exists():
        yield
        return
    POLICY_RC_D.write_text("#!/bin/sh\n# temporary, from lazarus dev up: do not start services\nexit 101\n")
    POLICY_RC_D.chmod(0o755)
    try:
        yield
    finally:
        POLICY_RC_D.unlink(missing_ok=True)
