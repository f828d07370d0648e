"""A crash is read from the structure of its report when its wording is new: a CUDA runtime error string
whatever wrapper prints it, a Slurm daemon's ``fatal:`` line, an exit status that names SIGKILL, a launcher
killing its remaining workers, and a Python traceback whose exception line was cut off."""

from __future__ import annotations

import pytest

from lazarus.detection.normalize import normalize
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "THCudaCheck FAIL file=lib/THC/THCStorage.c line=147 error=4 : unspecified launch failure",
            "cuda_launch_failure",
        ),
        ("cudaCheckError() failed at kernels.cu:88 : an illegal memory access was encountered", "cuda_illegal_address"),
    ],
)
def test_a_cuda_runtime_error_string_is_recognised_whatever_wrapper_prints_it(tmp_path, line, signature):
    result = diagnose_text(tmp_path, f"step 10 loss 2.1\n{line}\n")
    assert result.signature == signature
    assert result.failure_kind is FailureKind.CRASH


@pytest.mark.parametrize(
    "line",
    [
        "Mar  3 10:00:00 node7 slurmd[4242]: fatal: Unable to determine this slurmd's NodeName",
        "[2024-03-03T10:00:00.120] slurmctld: fatal: Invalid node names in partition gpu",
    ],
)
def test_a_slurm_daemon_fatal_line_is_a_scheduler_crash(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert result.signature == "generic_scheduler_error"
    assert result.failure_kind is FailureKind.CRASH
    assert result.category is Category.INFRASTRUCTURE


@pytest.mark.parametrize(
    "text",
    [
        "Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137\n",
        "[2024-02-01T08:15:02.004] _job_complete: JobId=5512 WTERMSIG 9\n",
        "worker-3 exited with code 137\n",
    ],
)
def test_an_exit_status_that_names_sigkill_is_a_killed_worker(tmp_path, text):
    result = diagnose_text(tmp_path, text)
    assert result.signature == "process_killed_sigkill"
    assert result.failure_kind is FailureKind.CRASH
    assert result.implicated_nodes == []


@pytest.mark.parametrize(
    "line", ["      Exit Code:    0", "      Exit Code:    1", "_job_complete: JobId=9 WEXITSTATUS 0"]
)
def test_an_exit_status_without_a_signal_is_not_a_kill(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert result.signature != "process_killed_sigkill"


def test_a_launcher_killing_its_remaining_workers_after_a_silent_death_is_a_crash(tmp_path):
    # nothing says why the worker ended: it died without a word, as a SIGKILL leaves it (seventh pass: host
    # memory, application, stop; tests/detection/test_found_but_wrong_answer.py)
    text = (
        "[2024-05-02 10:00:01,100] [INFO] [engine.py:120:step] step 40 loss 1.92\n"
        "[2024-05-02 10:00:07,420] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 7311\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "launcher_killed_workers"
    assert result.failure_kind is FailureKind.CRASH
    assert result.category is Category.APPLICATION
    assert result.retry_advice is RetryAdvice.STOP


def test_a_traceback_cut_before_its_exception_line_is_an_uncaught_exception(tmp_path):
    text = (
        "epoch 3 step 1200 loss 0.84\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/work/run.py", line 77, in <module>\n'
        "[rank0]:     main()\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "generic_uncaught_traceback"
    assert result.failure_kind is FailureKind.CRASH
    assert result.category is Category.APPLICATION


def test_a_traceback_with_its_exception_line_is_read_by_the_exception(tmp_path):
    text = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nKeyError: 'x'\n"
    assert diagnose_text(tmp_path, text).signature == "python_exception"


@pytest.mark.parametrize("stage", ["initialization", "mount"])
def test_every_stage_error_of_the_container_gpu_hook_is_the_nodes_driver_stack(tmp_path, stage):
    line = f"docker: Error response from daemon: OCI runtime create failed: stderr: nvidia-container-cli: {stage} error: failed\n"
    result = diagnose_text(tmp_path, line)
    assert result.signature == "container_gpu_init_failed"
    assert result.failure_kind is FailureKind.CRASH
    assert result.category is Category.SYSTEM_SOFTWARE


def test_gos_standard_log_time_is_stripped_like_any_timestamp():
    assert normalize("2021/03/04 05:06:07 RuntimeError: boom") == "RuntimeError: boom"


def test_an_xid_the_kubernetes_device_plugin_reports_is_read_as_the_drivers_xid(tmp_path):
    line = "2021/03/04 05:06:07 XidCriticalError: Xid=79 on Device=GPU-1234-abcd, the device will go unhealthy.\n"
    assert normalize(line.strip()) == "NVRM: Xid (GPU-1234-abcd): 79, the device will go unhealthy."
    result = diagnose_text(tmp_path, line)
    assert result.signature == "xid_79_fallen_off_bus"
    assert result.failure_kind is FailureKind.CRASH
    assert result.category is Category.HARDWARE
