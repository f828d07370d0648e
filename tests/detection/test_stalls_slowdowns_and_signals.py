"""A stall, a slowdown or an outside signal is read from the report's stable form: a stall inspector's "no
progress for N s" is a hang, a GPU that lowers its clocks for a thermal or power violation (DCGM's health codes,
nvidia-smi's clocks-event reasons) is a straggler, torchelastic's "Received N death signal" and bash's job-status
"Killed" report a process ended from outside, a child ended by signal 11 is a segfault whoever reports it
(a launcher's negative exit code, zsh's job status), and a managed-job controller's "cluster is preempted" a
preemption.
The stall, the slowdown and the outside signal are weak findings (low severity or a victim): any other failure
in the log wins."""

from __future__ import annotations

import pytest

from lazarus.detection.engine import Analyzer
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

STEPS = "step 100 loss 2.31\nstep 110 loss 2.29\n"


@pytest.mark.parametrize(
    "line",
    [
        "[1,3]<stderr>:[2023-01-01 10:00:00.000001: W horovod/common/stall_inspector.cc:105] One or more tensors "
        "were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
        "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different "
        "tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
        "W horovod/common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, gathered or "
        "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 120 seconds.",
    ],
)
def test_a_stall_inspector_reporting_no_progress_is_a_hang_of_unknown_cause(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\nStalled ranks:\n2: [allreduce.grad.0]\n")
    assert (result.signature, result.failure_kind, result.category) == (
        "horovod_stall",
        FailureKind.HANG,
        Category.UNKNOWN,
    )
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES


STALL = (
    "W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or "
    "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.\n"
)
SLOW_GPU = "ErrorCode:DCGM_FR_CLOCK_THROTTLE_THERMAL GPU:3 Detected clocks event due to thermal violation in GPU 3.\n"


def test_a_stall_that_cleared_before_the_file_ended_is_not_a_hang(tmp_path):
    steps = "".join(f"Epoch 1:  {n}%|#   | {n}/100 [00:{n:02d}<01:00, 1.02s/it, loss=2.2]\n" for n in (40, 41, 42))
    result = diagnose_text(tmp_path, f"{STALL}Stalled ranks:\n2: [allreduce.grad.0]\n{steps}")
    assert result.failure_kind is FailureKind.NONE
    assert any("horovod_stall" in note for note in result.notes)


@pytest.mark.parametrize("text", [STALL, SLOW_GPU])
def test_a_live_job_keeps_a_stall_or_a_slowdown_report_a_note(text):
    """The streaming analyser (telemetry's, on a running job) never acts on them: the stall may clear (the hang
    watchdog measures silence), and the live straggler detector compares ranks."""
    analyzer = Analyzer()
    for number, line in enumerate(f"{STEPS}{text}".splitlines(), start=1):
        analyzer.feed("job.log", number, line)
    result = analyzer.diagnosis()
    assert result.failure_kind is FailureKind.NONE and result.retry_advice is None
    assert any(note.startswith("advisory ") for note in result.notes)


def test_a_stall_inspector_report_gives_way_to_the_failure_that_caused_it(tmp_path):
    text = (
        "W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or "
        "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.\n"
        "May  1 12:00:03 node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    )
    assert diagnose_text(tmp_path, text).signature != "horovod_stall"


@pytest.mark.parametrize(
    "line",
    [
        "ERROR [1200:1201] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to "
        "thermal violation in GPU 5. Verify that the cooling on this machine is functional.",
        "GpuPowerWatchIsNotHealthy  gpu-health-monitor  ErrorCode:DCGM_FR_CLOCK_THROTTLE_POWER GPU:1 "
        "Detected clocks event due to power violation in GPU 1.",
        "health: ErrorCode:DCGM_FR_CLOCK_THROTTLE_THERMAL GPU:3",
        "        HW Slowdown                       : Active",
        "        SW Thermal Slowdown               : Active",
    ],
)
def test_a_gpu_slowed_by_a_thermal_or_power_violation_is_a_hardware_straggler(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert (result.signature, result.failure_kind, result.category) == (
        "gpu_clocks_event_slowdown",
        FailureKind.STRAGGLER,
        Category.HARDWARE,
    )
    assert result.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES


def test_clocks_event_reasons_that_are_not_active_are_not_a_slowdown(tmp_path):
    text = (
        "    Clocks Event Reasons\n"
        "        Idle                              : Active\n"
        "        HW Slowdown                       : Not Active\n"
        "        HW Thermal Slowdown               : Not Active\n"
        "        HW Power Brake Slowdown           : Not Active\n"
        "        SW Thermal Slowdown               : Not Active\n"
        "mce: CPU1: Core temperature above threshold, cpu clock throttled (total events = 2311)\n"
    )
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_a_slowdown_gives_way_to_a_crash_in_the_same_log(tmp_path):
    text = (
        "ErrorCode:DCGM_FR_CLOCK_THROTTLE_THERMAL GPU:3\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.CRASH


@pytest.mark.parametrize("number", ["1", "2", "15"])
def test_torchelastic_naming_the_signal_it_received_by_number_is_an_outside_termination(tmp_path, number):
    text = (
        f"{STEPS}W0501 12:00:01.000000 4100 torch/distributed/elastic/agent/server/api.py:723] "
        f"Received {number} death signal, shutting down workers\n"
        "W0501 12:00:01.000000 4100 torch/distributed/elastic/multiprocessing/api.py:900] "
        "Sending process 4101 closing signal SIGTERM\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind, result.category) == (
        "generic_external_signal",
        FailureKind.CRASH,
        Category.UNKNOWN,
    )
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES and result.implicated_nodes == []


@pytest.mark.parametrize(
    "line",
    [
        "/bin/bash: line 27:   318 Killed                  sh start.sh",
        "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py --epochs 4",
    ],
)
def test_bashs_job_status_report_of_a_killed_child_is_read_like_a_bare_killed(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert (result.signature, result.failure_kind) == ("host_oom_invoked", FailureKind.CRASH)


def test_a_word_killed_inside_a_sentence_is_not_a_job_status_report(tmp_path):
    text = "INFO line 3: 12 workers Killed by the user are restarted\n"
    assert diagnose_text(tmp_path, text).signature != "host_oom_invoked"


@pytest.mark.parametrize(
    "line",
    [
        "(sky-1a2b, pid=4242) I 05-01 12:00:01 controller.py:118] Cluster is preempted (status: INIT). Recovering...",
        "(train pid=4242) I 05-01 12:00:01 controller.py:100] The cluster is preempted.",
    ],
)
def test_a_managed_job_controller_saying_the_cluster_is_preempted_is_a_preemption(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "cloud_preemption",
        Category.INFRASTRUCTURE,
        RetryAdvice.RETRY_SAME_NODES,
    )


@pytest.mark.parametrize(
    "line",
    [
        "ERROR:composer.cli.launcher:Rank 3 crashed with exit code -11.",
        "worker 2 (pid 4102) failed with exit status -11",
        "[1]    21406 segmentation fault (core dumped)  python train.py --epochs 4",
    ],
)
def test_a_child_ended_by_signal_11_is_a_segfault_whoever_reports_it(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert (result.signature, result.failure_kind) == ("process_segfault", FailureKind.CRASH)


def test_an_exit_code_that_only_starts_like_minus_11_is_not_a_segfault(tmp_path):
    assert diagnose_text(tmp_path, "worker exited with exit code -110\n").signature != "process_segfault"


def test_the_elastic_agent_reporting_a_failed_worker_group_is_a_crash_whose_cause_is_elsewhere(tmp_path):
    text = (
        f"{STEPS}I0501 12:00:01.000000 4100 torch/distributed/elastic/agent/server/api.py:889] [default] "
        "Worker group FAILED. 2/3 attempts left; will restart worker group\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind, result.category) == (
        "elastic_child_failed",
        FailureKind.CRASH,
        Category.UNKNOWN,
    )
    assert result.implicated_nodes == []


def test_a_worker_group_that_succeeded_is_not_a_failure(tmp_path):
    text = "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished.\n"
    text += "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group SUCCEEDED\n"
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("node1: Test NCCL failure common.cu:1005 'unhandled CUDA error'", "nccl_unhandled_cuda_error"),
        ("node1: Test NCCL failure common.cu:1005 'unhandled system error'", "nccl_system_error"),
    ],
)
def test_nccl_tests_printing_an_nccl_result_string_is_read_like_pytorch_printing_it(tmp_path, line, signature):
    result = diagnose_text(tmp_path, f"#  Rank  0 Group  0 Pid   3288 on node1 device  0 [0x01] NVIDIA A100\n{line}\n")
    assert (result.signature, result.failure_kind) == (signature, FailureKind.CRASH)


@pytest.mark.parametrize(
    "details",
    [
        "Stalled ranks:\n2: [allreduce.grad.0, allreduce.grad.1]\n",
        "Missing ranks:\n0: [broadcast.bool.sz]\n",
        "Stalled ops: HorovodAllreduce_loss_Mean_0 [ready ranks: 3]\n",
        "Stalled ops:\nHorovodBroadcast_fc_weights_0 [missing ranks: 0]\n",
    ],
)
def test_a_finished_file_ending_in_a_stall_report_with_its_ranks_is_a_hang(tmp_path, details):
    """Horovod's inspector (stall_inspector.cc) lists the stalled operations and the ranks ready or missing under
    its warning, in any of its versions' forms; with that list as the file's last word the run ended stalled."""
    result = diagnose_text(tmp_path, f"{STEPS}{STALL}{details}")
    assert (result.signature, result.failure_kind) == ("horovod_stall", FailureKind.HANG)


def test_a_bare_stall_warning_ending_a_finished_file_stays_a_note(tmp_path):
    """The warning's first sentence alone (a forwarded or cut line) is what a stall that cleared prints too:
    horovod/horovod#2843 printed it, and training went on. Without the inspector's list it is never a recovery."""
    result = diagnose_text(tmp_path, f"{STEPS}{STALL}")
    assert result.failure_kind is FailureKind.NONE
    assert result.retry_advice is None
    assert any("horovod_stall" in note for note in result.notes)
