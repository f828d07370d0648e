"""Failures the engine found but answered with the wrong kind, category or advice (issue 9, seventh pass).

Each rule changes what one signature, or one layer, answers where at least three pool sources agree and none
disagree more (docs/benchmarks.md, "Seventh pass"); the lines are written for the test around the stable token
the rule reads. The cases marked "pin" hold what must not change with it.
"""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text

STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
CRASH, HANG = FailureKind.CRASH, FailureKind.HANG


# ---------------------------------------------------------------- SIGKILL with no killer named


@pytest.mark.parametrize(
    "text",
    [
        "E0101 00:00:00.000000 1 api.py:881] failed (exitcode: -9) local_rank: 3 (pid: 4410) of binary: /bin/python\n",
        "  traceback : signal 9 (SIGKILL) received by PID 4410\n",
        "  traceback : Signal 9 (SIGKILL) received by PID 4410\n",
        "[2024-01-01 00:00:09,000] [ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with "
        "return code = -9\n",
        "RuntimeError: worker process 2 failed with exit code -9\n",
        "srun: error: node7: task 3: Killed\n",
    ],
)
def test_a_sigkill_that_no_line_explains_is_host_memory_and_stops(tmp_path, text):
    assert answer(tmp_path, "step 120 loss 1.93\n" + text) == (
        "process_killed_sigkill",
        CRASH,
        Category.APPLICATION,
        STOP,
    )


def test_a_launcher_killing_the_others_after_a_silent_death_is_host_memory_and_stops(tmp_path):
    text = "[2024-01-01 00:00:07,420] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 7311\n"
    assert answer(tmp_path, text) == ("launcher_killed_workers", CRASH, Category.APPLICATION, STOP)


@pytest.mark.parametrize(
    ("text", "signature", "kind", "category", "advice"),
    [
        # pin: the scheduler's own reason for the kill outranks it
        (
            "slurmstepd: error: *** JOB 81 ON node3 CANCELLED AT 2024-05-01T12:00:03 DUE TO TIME LIMIT ***\n"
            "srun: error: node3: task 4: Killed\n",
            "slurm_time_limit",
            CRASH,
            Category.INFRASTRUCTURE,
            SAME,
        ),
        # pin: a collective timeout that the watchdog ended with SIGKILL is the hang it was
        (
            "[rank5]:[E501 12:10:00.1 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=47, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600015 ms\n"
            "Signal 9 (SIGKILL) received by PID 6102\n",
            "nccl_watchdog_timeout",
            HANG,
            Category.UNKNOWN,
            SAME,
        ),
        # pin: SIGTERM is a termination from outside, not memory
        (
            "[2024-01-01 00:00:09,000] [ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with "
            "return code = -15\n",
            "generic_external_signal",
            CRASH,
            Category.UNKNOWN,
            SAME,
        ),
        # pin: a worker that exited with status -7 died of SIGBUS, whoever reports it
        (
            "[2024-01-01 00:00:09,000] [ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with "
            "return code = -7\n",
            "process_bus_error",
            CRASH,
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
    ],
)
def test_a_kill_whose_reason_the_log_gives_keeps_that_reason(tmp_path, text, signature, kind, category, advice):
    assert answer(tmp_path, text) == (signature, kind, category, advice)


# ---------------------------------------------------------------- segfaults, NCCL system errors, launch failures


@pytest.mark.parametrize(
    "text",
    [
        "srun: error: node2: task 4: Segmentation fault (core dumped)\n",
        "Fatal Python error: Segmentation fault\n",
        "E0101 00:00:00.000000 1 api.py:881] failed (exitcode: -11) local_rank: 0 (pid: 4410) of binary: /bin/python\n",
    ],
)
def test_a_segfault_is_the_jobs_own_process_and_is_retried_once(tmp_path, text):
    assert answer(tmp_path, text)[1:] == (CRASH, Category.APPLICATION, SAME)


def test_an_nccl_system_error_is_of_unknown_cause(tmp_path):
    text = (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
        "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    )
    assert answer(tmp_path, text) == ("nccl_system_error", CRASH, Category.UNKNOWN, SAME)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: CUDA error: unspecified launch failure\n",
        "E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: "
        "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure\n",
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb)`\n",
    ],
)
def test_a_kernel_launch_failure_is_of_unknown_cause(tmp_path, text):
    assert answer(tmp_path, text) == ("cuda_launch_failure", CRASH, Category.UNKNOWN, SAME)


# ---------------------------------------------------------------- numerics


@pytest.mark.parametrize(
    "text",
    [
        " iteration      900/  100000 | lm loss: nan | loss scale: 1.0 |\n",
        "{'loss': nan, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 1.3}\n",
    ],
)
def test_a_nan_loss_stops_for_a_person_to_change_what_diverged(tmp_path, text):
    assert answer(tmp_path, text) == ("nan_loss", CRASH, Category.APPLICATION, STOP)


# ---------------------------------------------------------------- Slurm and MPI launchers


@pytest.mark.parametrize(
    "text",
    [
        "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n",
        "salloc: error: Job submit/allocate failed: Socket timed out on send/recv operation\n",
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n",
    ],
)
def test_a_submission_the_controller_never_answered_is_retried(tmp_path, text):
    assert answer(tmp_path, text) == ("slurm_controller_unreachable", CRASH, Category.INFRASTRUCTURE, SAME)


def test_a_submission_slurm_refused_still_stops(tmp_path):
    # pin: a refusal by Slurm's policy is the submission's to fix
    text = "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"
    assert answer(tmp_path, text) == ("slurm_request_rejected", CRASH, Category.APPLICATION, STOP)


def test_an_mpi_launcher_that_lost_a_daemon_retries_as_is(tmp_path):
    text = (
        "ORTE has lost communication with a remote daemon.\n"
        "\n"
        "  HNP daemon   : [[1137,0],0] on node login1\n"
        "  Remote daemon: [[1137,0],1] on node gpu-07\n"
    )
    assert answer(tmp_path, text) == ("mpi_lost_daemon", CRASH, Category.INFRASTRUCTURE, SAME)


# ---------------------------------------------------------------- a line wrapped at a word boundary


def test_a_watchdog_line_wrapped_at_a_word_boundary_is_read_whole(tmp_path):
    text = (
        "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure was: [Rank 2] "
        "Watchdog caught collective \n"
        "operation timeout: WorkNCCL(SeqNum=91, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800528 milliseconds "
        "before timing out.\n"
    )
    assert answer(tmp_path, text) == ("nccl_watchdog_timeout", HANG, Category.UNKNOWN, SAME)


def test_a_short_line_is_a_record_of_its_own_even_when_it_ends_in_a_space(tmp_path):
    # pin: only a long line (a terminal's or a web page's width) is taken for a wrapped one
    text = "[Rank 2] Watchdog caught collective \noperation timeout: see the other rank.\n"
    assert diagnose_text(tmp_path, text).signature != "nccl_watchdog_timeout"
