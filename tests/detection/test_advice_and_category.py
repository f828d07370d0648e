"""Advice and category once the failure is found, fifth pass of issue 9: where the pool's labels agree across
at least three sources, a signature's category or advice follows them; where they disagree, the safer advice is
kept (see docs/benchmarks.md, "Fifth pass"). Each case is one log written for the test, given to
``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES


@pytest.mark.parametrize(
    "text",
    [
        "Mar  2 10:00:01 head slurmctld[4021]: fatal: Duplicated NodeHostName gpu-a01 in the config file",
        "Mar  2 10:00:01 gpu-a01 slurmd[811]: fatal: gres.conf duplicate records for gpu",
        "Mar  2 10:00:01 gpu-a01 slurmd[811]: slurmd: fatal: can't stat gres.conf file /dev/nvidia3: No such file or directory",
        "[2026-03-02T10:00:01.118] error: Node gpu-a01 has low real_memory size (64000 < 512000)",
        "[2026-03-02T10:00:01.118] error: Node gpu-a01 has low socket*core*thread count (8 < 64)",
        "[2026-03-02T10:00:01.118] error: Node gpu-a01 has low cpu count (8 < 64)",
        'slurmctld: error: Parse error in file /etc/slurm/slurm.conf line 42: "Gres=gpu:8"',
    ],
)
def test_slurm_refusing_its_own_configuration_is_a_cluster_misconfiguration_that_stops(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.failure_kind, result.category, result.retry_advice, result.implicated_nodes) == (
        CRASH,
        Category.INFRASTRUCTURE,
        STOP,
        [],
    )


def test_a_slurm_error_the_catalogue_does_not_know_is_still_retried(tmp_path):
    result = diagnose_text(tmp_path, "slurmstepd: error: container_g_join failed: 4410\n")
    assert (result.category, result.retry_advice) == (Category.INFRASTRUCTURE, SAME)


def test_a_node_whose_resources_match_its_configuration_is_no_failure(tmp_path):
    result = diagnose_text(tmp_path, "[2026-03-02T10:00:01.118] Node gpu-a01 now responding\n")
    assert result.failure_kind is NONE
