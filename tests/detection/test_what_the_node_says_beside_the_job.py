"""A node's logs hold more than the job: what other processes and the step manager say there is not the job's failure.

Both rules came from benign excerpts of the fourth frozen set, after it was scored (docs/benchmarks.md): a node
agent's shell script that segfaulted once a minute beside a healthy training job (tensorflow/tensorflow#28639),
and slurmstepd's note that it could not enter the submit directory and runs the step in /tmp
(NVIDIA/deepops#1179, a passing NCCL test). The lines below are written for the tests.
"""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text


@pytest.mark.parametrize(
    "line",
    [
        "[Sun May 12 20:17:37 2019] sh[71666]: segfault at 7ffc62aff5e8 ip 00007ffc62aff5e8 sp 00007ffc62afe238 "
        "error 15",
        "[88211.402] python[40112]: segfault at 0 ip 00007f3b2c1d4e2a sp 00007ffd5a3f1c80 error 4 in "
        "libtorch_cuda.so[7f3b1c000000+2d000000]",
        "traps: pt_main_thread[9312] general protection fault ip:7f61b2e8d1a4 sp:7ffc2c1e8a90 error:0 in "
        "libc.so.6[7f61b2e00000+195000]",
    ],
)
def test_the_kernels_report_of_a_process_it_killed_is_a_note_whatever_the_process(tmp_path, line):
    """The kernel log is the node's, not the job's: a monitoring agent's process dies there too."""
    result = diagnose_text(tmp_path, line + "\n")
    assert result.failure_kind is FailureKind.NONE
    assert result.retry_advice is None
    assert any("kernel_segfault_report" in note for note in result.notes)


def test_a_rank_that_segfaults_is_still_read_from_the_jobs_own_report(tmp_path):
    text = (
        "[88211.402] python[40112]: segfault at 0 ip 00007f3b2c1d4e2a sp 00007ffd5a3f1c80 error 4\n"
        "srun: error: node2: task 4: Segmentation fault (core dumped)\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind, result.category) == (
        "process_segfault",
        FailureKind.CRASH,
        Category.APPLICATION,
    )
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES


def test_slurmstepd_running_the_step_in_tmp_is_no_failure(tmp_path):
    text = (
        "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n"
        "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20\n"
    )
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_another_slurmstepd_error_is_still_a_scheduler_error(tmp_path):
    result = diagnose_text(tmp_path, "slurmstepd: error: container_g_join failed: 119383\n")
    assert (result.signature, result.failure_kind) == ("generic_scheduler_error", FailureKind.CRASH)


def test_a_kernel_line_logged_under_the_loopback_name_blames_no_node(tmp_path):
    """``localhost`` is the name a host logs under before it has its own: it names no node of the cluster."""
    line = (
        "Jan 12 10:00:00 localhost kernel: pcieport 0000:00:01.1: AER: Uncorrected (Fatal) error received: "
        "0000:00:01.1\n"
    )
    result = diagnose_text(tmp_path, line)
    assert result.failure_kind is FailureKind.CRASH
    assert result.implicated_nodes == []
