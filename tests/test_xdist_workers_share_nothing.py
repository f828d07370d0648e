"""Under ``pytest -n N`` no two workers share a test cluster, a port or a fixed resource, and the slowest
files start first (``tests/scheduling.py``, ``cluster_settings`` in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazarus.config import DevSettings
from tests.conftest import TEST_DEV_SETTINGS, cluster_settings, xdist_worker_index
from tests.devstack.conftest import LZDEV_ENV
from tests.e2e import stack
from tests.scheduling import SHARED_RESOURCES, SLOW_DIRECTORIES, SLOWEST, rank_of, scope_of

WORKERS = range(4)
EPHEMERAL = range(32768, 61000)  # Linux's default ip_local_port_range: what the devstack reserves


def _daemon_ports(dev: DevSettings) -> set[int]:
    slurmd = range(dev.slurmd_port0, dev.slurmd_port0 + dev.nodes)
    return {dev.slurmctld_port, dev.slurmdbd_port, dev.mysql_port, *slurmd}


def test_worker_0_and_a_run_without_xdist_use_lztest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert xdist_worker_index() == 0 and cluster_settings(0) is TEST_DEV_SETTINGS
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    assert xdist_worker_index() == 2


def test_each_worker_has_its_own_cluster_name_state_dir_and_ports() -> None:
    clusters = [cluster_settings(n) for n in WORKERS]
    assert len({c.cluster_name for c in clusters}) == len({c.state_dir for c in clusters}) == len(clusters)
    seen: set[int] = set()
    for dev in clusters:
        ports = _daemon_ports(dev)
        assert not ports & seen and ports <= set(EPHEMERAL)  # disjoint, and reserved like lztest's
        seen |= ports
    lzdev = {int(v) for k, v in LZDEV_ENV.items() if k.endswith("PORT") or k.endswith("PORT0")}
    assert not seen & lzdev and not seen & _daemon_ports(DevSettings())  # nor the lzdev or a default dev stack


def test_extra_clusters_keep_the_test_cluster_shape() -> None:
    for n in WORKERS[1:]:
        dev = cluster_settings(n)
        assert (dev.nodes, dev.gpus_per_node, dev.accounting, dev.workers) == (4, 4, True, False)
        assert dev.state_dir == Path(f"/var/tmp/lazarus-test{n}") and dev.cluster_name == f"lztest{n}"


def test_e2e_free_ports_of_two_workers_never_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    picked: dict[int, set[int]] = {}
    for n in WORKERS:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{n}")
        picked[n] = {stack.free_port() for _ in range(50)}
        low = 20000 + stack.FREE_PORTS_PER_WORKER * n
        assert all(low <= port < low + stack.FREE_PORTS_PER_WORKER for port in picked[n])
        assert max(picked[n]) < min(EPHEMERAL)


def test_files_sharing_a_fixed_resource_are_one_unit_of_work() -> None:
    assert scope_of("tests/devstack/test_up_is_idempotent.py::test_a") == scope_of(
        "tests/devstack/test_down_stops_only_ours.py::test_b"
    )
    assert scope_of("tests/health/test_metrics_endpoint.py::t") == scope_of("tests/straggler/test_peer_median.py::t")
    assert scope_of("tests/e2e/test_cli.py::a") == scope_of("tests/e2e/test_cli.py::b") == "tests/e2e/test_cli.py"
    assert scope_of("tests/e2e/test_cli.py::a") != scope_of("tests/e2e/test_audit.py::a")


def test_the_slowest_files_start_first_and_each_named_one_exists() -> None:
    root = Path(__file__).parent.parent
    for unit in SLOWEST:
        assert unit in SHARED_RESOURCES.values() or (root / unit).is_file(), unit
    ranks = [rank_of(f"{unit}::t") if not unit.startswith("shared:") else SLOWEST.index(unit) for unit in SLOWEST]
    assert ranks == sorted(ranks)
    slowest_unnamed = rank_of(f"{SLOW_DIRECTORIES[0]}test_x.py::t")
    assert SLOWEST.index(SLOWEST[-1]) < slowest_unnamed < rank_of("tests/models/test_x.py::t")
