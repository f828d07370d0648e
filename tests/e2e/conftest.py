from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.receiver import Receiver
from tests.e2e.stack import E2EStack


@pytest.fixture(scope="session")
def webhooks() -> Iterator[Receiver]:
    """A real HTTP receiver on loopback that the session's worker posts its notices to."""
    receiver = Receiver()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def e2e(slurm_cluster, webhooks: Receiver):
    """One Temporal server + one worker (act mode) for the whole e2e session, on the real test cluster."""
    stack = E2EStack(cluster=slurm_cluster, root=Path(tempfile.mkdtemp(prefix="lazarus-e2e-")), webhooks=webhooks.url)
    stack.write_config()
    stack.start_server(first=True)
    stack.start_worker()
    yield stack
    stack.stop()


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path
