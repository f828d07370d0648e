"""A second, private stack (cluster ``lzdev``) for the tests of ``lazarus dev`` itself.

It has its own state directory and ports, so tests can bring it up and down
without touching the shared ``lztest`` cluster other tests use. Workers are
off: these tests are about the stack, not about the worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

LZDEV_STATE = Path("/var/tmp/lazarus-devstack-test")
LZDEV_ENV = {
    "LAZARUS_DEV__STATE_DIR": str(LZDEV_STATE),
    "LAZARUS_DEV__CLUSTER_NAME": "lzdev",
    "LAZARUS_DEV__SLURMCTLD_PORT": "46817",
    "LAZARUS_DEV__SLURMD_PORT0": "47001",
    "LAZARUS_DEV__SLURMDBD_PORT": "46819",
    "LAZARUS_DEV__MYSQL_PORT": "46306",
    "LAZARUS_DEV__TEMPORAL_PORT": "47233",
    "LAZARUS_DEV__TEMPORAL_UI_PORT": "48233",
    "LAZARUS_DEV__TEMPORAL_HTTP_PORT": "47243",
    "LAZARUS_DEV__INBOX_PORT": "47480",
    "LAZARUS_DEV__NODE_AGENT_PORT0": "49401",
    "LAZARUS_DEV__WORKERS": "false",
}


# The real CLI entry (argument parsing, error printing, exit codes), loading only
# the `dev` subcommand: these specs are about `lazarus dev`, and must not fail
# because another subcommand's module is broken at the moment.
CLI = "import sys; from lazarus.cli import main as m; m.SUBCOMMAND_MODULES = {modules!r}; sys.exit(m.main())"


def lazarus(
    *args: str,
    extra_env: dict[str, str] | None = None,
    timeout: float = 180,
    modules: tuple[str, ...] = ("lazarus.cli.dev",),
) -> subprocess.CompletedProcess[str]:
    """Run the `lazarus` CLI against the lzdev stack, as a user would (with the subcommands of ``modules``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAZARUS_", "SLURM_"))}
    env.update(LZDEV_ENV)
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-c", CLI.format(modules=modules), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="session")
def lzdev() -> Iterator[None]:
    """Stop the lzdev stack at the end, whatever the tests left running."""
    yield
    lazarus("dev", "down")
