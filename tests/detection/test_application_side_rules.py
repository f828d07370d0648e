"""Failures the job's own code or launch causes, recognised by stable tokens and structural rules.

Each rule here carries to sources never seen: an errno name, the interpreter's exit status, the shape of a
traceback, the loss scalers' own messages, a logger's prefix. Excerpts are written for the test.
"""

from __future__ import annotations

import pytest

from lazarus.detection.normalize import normalize
from lazarus.detection.reader import diagnose_files
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer_of, diagnose_text

STOP = RetryAdvice.STOP
SAME = RetryAdvice.RETRY_SAME_NODES


# ---------------------------------------------------------------- the traceback layer


def test_a_raise_statement_under_an_exception_line_is_not_part_of_its_message(tmp_path):
    # Ranks interleave: one rank's exception line, then another traceback's source line.
    text = "[rank3]: KeyError: 'labels'\n    raise ChildFailedError(\n    raise SomeOtherError(\n"
    result = diagnose_text(tmp_path, text)
    assert answer_of(result) == ("python_exception", FailureKind.CRASH, Category.APPLICATION, STOP)
    assert result.evidence[0].text == "[rank3]: KeyError: 'labels'"


def test_an_assert_statement_is_not_joined_to_the_line_before(tmp_path):
    text = "ValueError: bad shard index 9\n    assert world_size % tp == 0\n"
    result = diagnose_text(tmp_path, text)
    assert result.evidence[0].text == "ValueError: bad shard index 9"


def test_a_bare_exception_ending_a_traceback_is_the_programs_own_error(tmp_path):
    text = (
        "Traceback (most recent call last):\n"
        '  File "run.py", line 9, in <module>\n'
        "    raise Exception(\n"
        "Exception: no checkpoint matches the requested step\n"
    )
    assert answer_of(diagnose_text(tmp_path, text)) == (
        "python_exception",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ERROR 03-04 10:11:12 engine.py:120] ValueError: no room", "ValueError: no room"),
        ("WARNING 12-31 23:59:59.123 scheduler.py:7] slow", "slow"),
        ("server-0    | ERROR 03-04 10:11:12 worker.py:5] KeyError: 'k'", "KeyError: 'k'"),
        (
            "```RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED ```",
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED ```",
        ),
        ("`ImportError: cannot import name 'x'`", "ImportError: cannot import name 'x'`"),
    ],
)
def test_the_vllm_logger_a_padded_compose_name_and_markdown_code_marks_are_stripped(line, message):
    assert normalize(line) == message


def test_an_exception_behind_the_vllm_logger_is_recognised(tmp_path):
    text = "api-1   | ERROR 03-04 10:11:12 engine.py:120] ValueError: max_model_len is larger than the KV cache\n"
    assert answer_of(diagnose_text(tmp_path, text))[0] == "python_exception"


# ---------------------------------------------------------------- the worker's exit status


def test_a_worker_exit_status_of_one_is_an_uncaught_exception(tmp_path):
    text = "E0101 00:00:00.000000 1 api.py:869] failed (exitcode: 1) local_rank: 2 (pid: 77) of binary: /bin/python\n"
    assert answer_of(diagnose_text(tmp_path, text)) == (
        "elastic_worker_exception_exit",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )


def test_a_worker_killed_by_a_signal_is_not_called_the_programs_error(tmp_path):
    text = "failed (exitcode: -15) local_rank: 0 (pid: 11) of binary: /bin/python\n"
    result = diagnose_text(tmp_path, text)
    assert result.category is not Category.APPLICATION


def test_a_worker_killed_by_sigkill_is_not_called_an_uncaught_exception(tmp_path):
    # -9 is SIGKILL, read as such (host memory: tests/detection/test_found_but_wrong_answer.py), never exit status 1's
    text = "failed (exitcode: -9) local_rank: 0 (pid: 11) of binary: /bin/python\n"
    assert diagnose_text(tmp_path, text).signature == "process_killed_sigkill"


def test_a_collective_timeout_outranks_the_exit_status_it_caused(tmp_path):
    text = (
        "[rank1]:[E101 00:00:01.0 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds"
        " before timing out.\n"
        "failed (exitcode: 1) local_rank: 1 (pid: 12) of binary: /bin/python\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind, result.retry_advice) == (
        "nccl_watchdog_timeout",
        FailureKind.HANG,
        SAME,
    )


# ---------------------------------------------------------------- launch configuration


@pytest.mark.parametrize(
    "line",
    [
        "OSError: [Errno 98] Address already in use",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29511, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:12355 (errno: 98 - Address already in use).",
    ],
)
def test_a_port_already_taken_is_a_launch_mistake(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, line + "\n")) == (
        "store_bind_failed",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )


# ---------------------------------------------------------------- CUDA runtime


def test_an_illegal_address_without_hardware_evidence_stops_and_names_the_node_to_watch(tmp_path):
    text = "node7: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    path = tmp_path / "job.log"
    path.write_text(text)
    result = diagnose_files([path], known_nodes=["node7"])
    assert answer_of(result) == ("cuda_illegal_address", FailureKind.CRASH, Category.APPLICATION, STOP)
    assert result.implicated_nodes == ["node7"]


def test_an_illegal_address_with_an_uncontained_ecc_error_is_the_gpus_fault(tmp_path):
    text = (
        "May  1 12:00:00 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 95, pid=4411, Uncontained ECC error\n"
        "node7: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    path = tmp_path / "job.log"
    path.write_text(text)
    result = diagnose_files([path], known_nodes=["node7"])
    assert (result.category, result.retry_advice) == (Category.HARDWARE, RetryAdvice.RETRY_EXCLUDING_NODES)


def test_the_drivers_own_report_of_the_fault_decides_over_the_runtimes(tmp_path):
    # Xid 31 is NVIDIA's RESTART_APP bucket: with it in the log, the vendor's answer stands.
    text = (
        "May  1 12:00:03 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=1201, name=python, Ch 00000008, "
        "intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2a_5e000000.\n"
        "node7: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    path = tmp_path / "job.log"
    path.write_text(text)
    result = diagnose_files([path], known_nodes=["node7"])
    assert (result.signature, result.retry_advice, result.implicated_nodes) == ("xid_31_mmu_fault", SAME, ["node7"])


# ---------------------------------------------------------------- numeric instability


@pytest.mark.parametrize(
    "line",
    [
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 0.25",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 3.0517578125e-05",
        "2021-01-01 00:00:00 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.0625",
        "| WARNING: overflow detected, setting loss scale to: 0.5",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1.0, reducing to 0.5",
    ],
)
def test_a_loss_scale_driven_below_one_is_a_divergence(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, line + "\n")) == (
        "loss_scale_below_one",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )


@pytest.mark.parametrize(
    "line",
    [
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1024.0",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4.0, reducing to 2.0",
    ],
)
def test_a_loss_scale_lowered_but_still_at_least_one_is_routine(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.failure_kind, result.retry_advice) == (FailureKind.NONE, None)


# ---------------------------------------------------------------- out of memory, other frameworks


@pytest.mark.parametrize(
    "line",
    [
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 81920 bytes.",
        "2019-06-13 01:17:08.886805: E local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out",
        "ResourceExhaustedError: Resource exhausted: OOM when allocating tensor with shape[8,4096] on device:GPU:0",
    ],
)
def test_an_xla_or_tensorflow_device_allocation_failure_is_out_of_memory(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, line + "\n")) == (
        "cuda_oom",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )


def test_a_tensorflow_host_allocation_failure_is_not_called_a_gpu_one(tmp_path):
    line = "Resource exhausted: OOM when allocating tensor with shape[8,4096] on /job:localhost/device:CPU:0\n"
    assert diagnose_text(tmp_path, line).signature != "cuda_oom"


# ---------------------------------------------------------------- the cluster manager


@pytest.mark.parametrize(
    "line",
    [
        "The node with node id: 9a1c and address: 10.1.2.3 and node name: 10.1.2.3 has been marked dead because "
        "the detector has missed too many heartbeats from it.",
        "The node with client ID 77ab has been marked dead because the monitor has missed too many heartbeats from it.",
        "[2024-01-01 00:00:00,000 C 7 7] node_manager.cc:170: This node has beem marked as dead.",
    ],
)
def test_a_node_the_cluster_manager_declared_dead_is_a_crash_of_unknown_cause(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert answer_of(result) == ("cluster_member_marked_dead", FailureKind.CRASH, Category.UNKNOWN, SAME)
    assert result.implicated_nodes == []


def test_the_cause_on_the_dead_node_outranks_its_removal(tmp_path):
    text = (
        "May  1 12:00:00 node3 kernel: Out of memory: Killed process 4242 (raylet) total-vm:1000kB, anon-rss:900kB\n"
        "The node with node id: 9a1c has been marked dead because the detector has missed too many heartbeats.\n"
    )
    assert diagnose_text(tmp_path, text).signature != "cluster_member_marked_dead"


# ---------------------------------------------------------------- external termination


def test_a_traceback_ending_in_keyboard_interrupt_is_a_signal_from_outside(tmp_path):
    text = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    loss.backward()\nKeyboardInterrupt\n'
    assert answer_of(diagnose_text(tmp_path, text)) == (
        "generic_external_signal",
        FailureKind.CRASH,
        Category.UNKNOWN,
        SAME,
    )


def test_a_ray_worker_death_is_not_read_as_the_causes_it_lists(tmp_path):
    text = (
        "(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker exit type: "
        "SYSTEM_ERROR. Potential root causes: (1) SIGKILL by the OOM killer (2) ray stop --force (3) SIGSEGV.\n"
    )
    assert answer_of(diagnose_text(tmp_path, text)) == ("ray_worker_died", FailureKind.CRASH, Category.UNKNOWN, SAME)


def test_a_workers_death_explains_its_peers_collective_timeout(tmp_path):
    text = (
        "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n"
        "[rank1]:[E101 00:00:01.0 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLGATHER, NumelIn=1, NumelOut=2, Timeout(ms)=600000) ran for 600033 milliseconds\n"
    )
    assert diagnose_text(tmp_path, text).signature == "ray_worker_died"


def test_a_segfault_a_ray_worker_reports_in_its_own_log_is_still_the_root(tmp_path):
    text = (
        "WARNING worker.py:1619 -- A worker died or was killed while executing task 5d17ffff.\n"
        "(pid=2417, ip=10.0.0.5) *** SIGSEGV (@0x88) received by PID 2417 (TID 0x7f73) from PID 136; stack trace: ***\n"
    )
    assert diagnose_text(tmp_path, text).signature == "process_segfault"


def test_rays_driver_warning_that_a_worker_died_is_not_by_itself_a_failure(tmp_path):
    """Older Ray versions print the driver's WARNING while a program that succeeded tears its workers down at
    exit; a real death shows its cause in other lines (the raylet's SYSTEM_ERROR report, a signal)."""
    text = (
        "epoch 3: val_loss=2.31\n"
        "2024-01-01 10:00:00,032 WARNING worker.py:1072 -- A worker died or was killed while executing task ffff01.\n"
        "all done\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.failure_kind is FailureKind.NONE and result.retry_advice is None


@pytest.mark.parametrize(
    "line",
    [
        "[Fri May 31 00:54:38 2024] LustreError: 2615:0:(mgc_request.c:612:do_requeue()) failed processing log: -5",
        "May  1 12:00:00 node2 kernel: LNetError: 120-3: Refusing connection from 10.0.0.9 for 10.0.0.2@tcp: No matching NI",
    ],
)
def test_a_lustre_kernel_message_is_not_read_as_a_python_exception(tmp_path, line):
    assert diagnose_text(tmp_path, line + "\n").signature != "python_exception"


def test_the_cuda_runtime_assert_enum_is_a_device_side_assertion(tmp_path):
    line = "RuntimeError: transform: failed to synchronize: cudaErrorAssert: device-side assert triggered\n"
    assert answer_of(diagnose_text(tmp_path, line)) == (
        "cuda_device_assert",
        FailureKind.CRASH,
        Category.APPLICATION,
        STOP,
    )
