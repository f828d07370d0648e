"""How ``pytest -n N`` (pytest-xdist) shares the suite between its workers.

The suite is mostly waiting (Slurm requeue delays, hang budgets, polling), so
workers that wait side by side cut its wall time. Each worker has its own Slurm
test cluster (``tests/conftest.py``: ``cluster_settings``) and its own e2e
Temporal server and worker, so tests of different workers never share nodes.

A unit of work is one test file: tests of a file share module fixtures and
sometimes the session's e2e stack in order. Files that use one fixed resource
(a port range, a state directory) are one unit together, so they never run at
the same time on two workers: ``SHARED_RESOURCES``.

Units are handed out slowest first (``SLOWEST``, measured with
``--durations=0``; the rest by directory, Slurm and e2e first), so that the
long ones start early and the workers finish together.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

# Path prefix -> the one unit of work all its files form.
SHARED_RESOURCES: dict[str, str] = {
    # lzdev: fixed state dir /var/tmp/lazarus-devstack-test and ports 46xxx-49xxx; node agents on 19521-19540
    "tests/devstack/": "shared:lzdev",
    # the first free port of 19090-19110 (Prometheus, node agents): two workers would both pick the same one
    "tests/health/": "shared:ports-19090-19110",
    "tests/straggler/": "shared:ports-19090-19110",
    # .tools/helm, fetched by the first session that misses it: one fetch, not two writing the same file
    "tests/helm/": "shared:helm-binary",
}

# Units of work, slowest first: seconds (setup + call + teardown) in `pytest -n 3 --durations=0` on 2 loaded cores.
SLOWEST: Sequence[str] = (
    "tests/e2e/test_chaos_soak.py",  # 253
    "tests/e2e/test_compare_smoke.py",  # 185
    "tests/e2e/test_spares_replace_the_failed_node.py",  # 167
    "shared:lzdev",  # 136
    "tests/e2e/test_scale_benchmarks.py",  # 125
    "tests/e2e/test_crash_survival.py",  # 120
    "tests/e2e/test_blind_spells.py",  # 108
    "tests/e2e/test_expedite_on_a_full_cluster.py",  # 91
    "tests/e2e/test_drain_needs_corroboration.py",  # 80
    "tests/e2e/test_cli.py",  # 75
    "tests/e2e/test_hostile_input.py",  # 71
    "tests/e2e/test_guides_wrong_input.py",  # 67
    "tests/e2e/test_telemetry_failover.py",  # 55
    "tests/e2e/test_only_operators_may_approve.py",  # 53
    "tests/e2e/test_kill_switch_fails_closed.py",  # 45
    "tests/e2e/test_monitor_mode.py",  # 45
    "tests/e2e/test_act_only_on_fresh_state.py",  # 42
    "tests/e2e/test_audit.py",  # 40
    "tests/e2e/test_opt_in.py",  # 37
    "tests/e2e/test_hang_and_limits.py",  # 34
)
# After those: the rest of these directories in this order, then everything else.
SLOW_DIRECTORIES: Sequence[str] = ("tests/e2e/", "tests/slurm/", "tests/workflows/", "tests/soak/")


def scope_of(nodeid: str) -> str:
    """The unit of work of a test: its shared resource's name, or else its file."""
    path = nodeid.split("::", 1)[0]
    for prefix, name in SHARED_RESOURCES.items():
        if path.startswith(prefix):
            return name
    return path


def rank_of(nodeid: str) -> int:
    """Where the test's unit of work goes in the queue: lower first."""
    scope = scope_of(nodeid)
    if scope in SLOWEST:
        return SLOWEST.index(scope)
    for i, directory in enumerate(SLOW_DIRECTORIES):
        if scope.startswith(directory):
            return len(SLOWEST) + i
    return len(SLOWEST) + len(SLOW_DIRECTORIES)


def order_slowest_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` by their unit's rank; a stable sort keeps each file's own order."""
    items.sort(key=lambda item: rank_of(item.nodeid))


class SharedResourceScheduling(LoadScopeScheduling):
    """pytest-xdist's ``loadscope`` with units of work from :func:`scope_of`, in collection order."""

    def __init__(self, config: pytest.Config, log: Producer | None = None) -> None:
        config.option.loadscopereorder = False  # keep the slowest-first order, not "most tests first"
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)
