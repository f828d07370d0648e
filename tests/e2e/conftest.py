from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.e2e.stack import E2EStack


@pytest.fixture(scope="session")
def e2e(slurm_cluster):
    """One Temporal server + one worker (act mode) for the whole e2e session, on the real test cluster."""
    stack = E2EStack(cluster=slurm_cluster, root=Path(tempfile.mkdtemp(prefix="lazarus-e2e-")))
    stack.write_config()
    stack.start_server(first=True)
    stack.start_worker()
    yield stack
    stack.stop()


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path
