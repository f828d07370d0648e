"""Failures of the job's own setup or of its surroundings are read from their stable forms, whoever prints them.

Device memory is exhausted in other frameworks' words too (TensorFlow's "OOM when allocating tensor", CUDA's
"out of memory" however a wrapper capitalises "error", HIP's enum, vLLM's KV-cache check); host memory is
exhausted when Ray's memory monitor says so; a loss metric is any metric named loss or ending in loss; a lost
TensorFlow worker is a crash only as a finished file's last word; an exit status of 143 is SIGTERM; a Slurm
command's fatal line, Slurm's own node reason and a rank's broken c10d store socket are read; a store host name
that does not resolve and a library the run needs that cannot load stop the job; a traceback cut to its frames
is still an uncaught exception; processes that announce the same global ranks while others never appear are a
launch that hangs. Each case pins also what must not change.
"""

from __future__ import annotations

import pytest

from lazarus.detection.engine import Analyzer
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer_of, diagnose_text

STEPS = "step 100 loss 2.31\nstep 110 loss 2.29\n"


@pytest.mark.parametrize(
    "line",
    [
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,12,512,512] "
        "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[32,8,200,200]",
        "RuntimeError: CUDA Error: out of memory at /src/csrc/allocator.cpp:61",
        "hipErrorOutOfMemory: out of memory",
        "RuntimeError: HIP error: out of memory",
        "ERROR 05-01 12:00:00 [core.py:700] ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.",
    ],
)
def test_device_memory_exhausted_in_any_frameworks_words_is_an_application_oom(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{line}\n")) == (
        "cuda_oom",
        FailureKind.CRASH,
        Category.APPLICATION,
        RetryAdvice.STOP,
    )


def test_a_tensorflow_allocation_on_the_cpu_is_not_device_memory(tmp_path):
    line = "OOM when allocating tensor with shape[1024,50257] on /job:localhost/replica:0/task:0/device:CPU:0\n"
    assert diagnose_text(tmp_path, f"{STEPS}{line}").signature != "cuda_oom"


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "(raylet) node_manager.cc:3069: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
            "crashed due to other reasons at node (ID: 9a1b, IP: 10.1.2.3) over the last time period.",
            "ray_memory_monitor_kill",
        ),
        (
            "(gcs_server) gcs_worker_manager.cc:55: Reporting worker exit, worker id = 1f, node id = 2e, address = "
            "10.1.2.3, exit_type = NODE_OUT_OF_MEMORY, exit_detail = Task was killed due to the node running low "
            "on memory.",
            "ray_memory_monitor_kill",
        ),
    ],
)
def test_host_memory_exhausted_by_rays_monitor_stops_the_job(tmp_path, line, signature):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert answer_of(result) == (signature, FailureKind.CRASH, Category.APPLICATION, RetryAdvice.STOP)
    assert result.implicated_nodes == []


def test_deepspeeds_allocator_flush_warning_under_memory_pressure_is_not_an_oom(tmp_path):
    line = (
        "[WARNING] [stage3.py:1939:step] 4 pytorch allocator cache flushes since last step. this happens when "
        "there is high memory pressure and is detrimental to performance.\n"
    )
    assert diagnose_text(tmp_path, f"{STEPS}{line}").failure_kind is FailureKind.NONE


@pytest.mark.parametrize(
    "line",
    [
        "2024-05-01 10:00:00 iter 3010: loss nan, time 1019.95ms, mfu 14.12%",
        "step:83 - actor/kl_loss:nan - actor/entropy_loss:nan - actor/pg_loss:nan - actor/lr:0.000",
        "Training  [  40/5000]  lr: 0.0000 (0.0000)  total_loss: inf (inf)  koleo_loss: inf (inf)  time: 1.5",
    ],
)
def test_a_metric_named_loss_or_ending_in_loss_that_is_nan_or_inf_is_a_diverged_run(tmp_path, line):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert (result.signature, result.failure_kind, result.category) == (
        "nan_loss",
        FailureKind.CRASH,
        Category.APPLICATION,
    )


@pytest.mark.parametrize(
    "line",
    [
        "| epoch 003 | loss 3.976 | loss_scale 0.000 | gnorm 0.635 | number of nan iterations: 0",
        "iteration 5/50 | lm loss: 7.3E-01 | loss scale: 1.0 | grad norm: 0.7 | number of nan iterations: 0",
        "Epoch 2: loss_information inform 0.31",
    ],
)
def test_a_finite_loss_a_loss_scale_or_a_nan_counter_is_not_a_diverged_run(tmp_path, line):
    assert diagnose_text(tmp_path, f"{STEPS}{line}\n").failure_kind is FailureKind.NONE


TF_LOST_WORKER = (
    "INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker or parameter "
    "server. The current session will be closed and a new session will be created. This error may also occur "
    "due to a gRPC failure caused by high memory or network bandwidth usage in the parameter servers. Error: "
    "Socket closed\n"
)


def test_a_lost_tensorflow_worker_as_a_finished_files_last_word_is_an_infrastructure_crash(tmp_path):
    result = diagnose_text(
        tmp_path, f"INFO:tensorflow:Saving checkpoints for 8300 into gs://b/model.ckpt.\n{TF_LOST_WORKER}"
    )
    assert answer_of(result) == (
        "tf_session_lost_worker",
        FailureKind.CRASH,
        Category.INFRASTRUCTURE,
        RetryAdvice.RETRY_SAME_NODES,
    )


def test_a_lost_tensorflow_worker_that_the_session_recovered_from_is_no_failure(tmp_path):
    after = "".join(
        f"I0902 03:3{n}:36.516501 1400 basic_session_run_hooks.py:260] loss = 1.1, step = {n} (45.410 sec)\n"
        for n in range(3)
    )
    result = diagnose_text(tmp_path, f"{TF_LOST_WORKER}{after}")
    assert result.failure_kind is FailureKind.NONE


def test_a_live_job_keeps_a_lost_tensorflow_worker_a_note():
    analyzer = Analyzer()
    analyzer.feed("job.log", 1, TF_LOST_WORKER.strip())
    result = analyzer.diagnosis()
    assert result.failure_kind is FailureKind.NONE
    assert any("tf_session_lost_worker" in note for note in result.notes)


@pytest.mark.parametrize(
    "line",
    [
        "WARN  nextflow.processor.TaskProcessor - Process `align (17)` terminated with an error exit status (143)",
        "      Exit Code:    143",
        "command terminated with exit code 143",
    ],
)
def test_an_exit_status_of_143_is_a_termination_by_sigterm(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{line}\n")) == (
        "generic_external_signal",
        FailureKind.CRASH,
        Category.UNKNOWN,
        RetryAdvice.RETRY_SAME_NODES,
    )


def test_an_exit_status_that_only_contains_143_is_not_sigterm(tmp_path):
    assert diagnose_text(tmp_path, f"{STEPS}Exit Code:    1430\n").signature != "generic_external_signal"


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("scontrol: fatal: Could not establish a configuration source", "generic_scheduler_error"),
        ("sinfo: fatal: Unable to establish controller machine", "generic_scheduler_error"),
        (
            "NodeName=gpu07 Arch=x86_64 State=DOWN Reason=Node unexpectedly rebooted [slurm@2024-05-01T10:00:00]",
            "slurm_node_rebooted",
        ),
        (
            "REASON                USER  TIMESTAMP            NODELIST\nNode unexpectedly rebooted  slurm  2024-05-01T10:00:00  gpu07",
            "slurm_node_rebooted",
        ),
    ],
)
def test_slurms_own_fatal_lines_and_node_reasons_are_infrastructure_crashes(tmp_path, line, signature):
    result = diagnose_text(tmp_path, f"{STEPS}{line}\n")
    assert answer_of(result) == (signature, FailureKind.CRASH, Category.INFRASTRUCTURE, RetryAdvice.RETRY_SAME_NODES)
    assert result.implicated_nodes == []


@pytest.mark.parametrize(
    "line",
    [
        "[W501 10:00:00.7 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, addr=[n1]:3867, "
        "remote=[n0]:23456) timed out after 900000ms",
        "[W socket.cpp:462] [c10d] waitForInput: poll for socket SocketImpl(fd=11) returned 0, likely a timeout",
        "[W socket.cpp:432] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).",
        "[rank3]:[W501 10:00:00.1 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=7, addr=[n1]:600, "
        "remote=[n0]:29500): failed to recv, got 0 bytes",
    ],
)
def test_a_rank_that_lost_its_c10d_store_connection_is_a_crash_of_unknown_cause(tmp_path, line):
    text = f"{STEPS}{line}\nTraceback (most recent call last):\n"
    assert answer_of(diagnose_text(tmp_path, text)) == (
        "store_socket_lost",
        FailureKind.CRASH,
        Category.UNKNOWN,
        RetryAdvice.RETRY_SAME_NODES,
    )


def test_a_lost_store_connection_gives_way_to_the_exception_that_caused_it(tmp_path):
    text = (
        "[W socket.cpp:432] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).\n"
        "ValueError: the batch holds no samples\n"
    )
    assert diagnose_text(tmp_path, text).signature == "python_exception"


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR] coordinator_p2p: Rank 1 received an Exception. Detailed message: host not found: Name or service "
        "not known",
        "ValueError: host not found: Temporary failure in name resolution",
    ],
)
def test_a_store_host_name_the_ranks_cannot_resolve_is_a_launch_mistake(tmp_path, line):
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{line}\n")) == (
        "store_host_not_resolved",
        FailureKind.CRASH,
        Category.APPLICATION,
        RetryAdvice.STOP,
    )


def test_a_download_that_cannot_resolve_its_host_is_not_a_launch_mistake(tmp_path):
    line = (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded (Caused by NewConnectionError('Failed to establish a new connection: [Errno -3] Temporary "
        "failure in name resolution'))"
    )
    assert diagnose_text(tmp_path, f"{STEPS}{line}\n").signature != "store_host_not_resolved"


@pytest.mark.parametrize(
    ("line", "signature", "category"),
    [
        (
            "E pjrt_stream_executor_client.cc:2732] Execution of replica 0 failed: INTERNAL: NCCL operation "
            "ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.",
            "nccl_library_missing",
            Category.APPLICATION,
        ),
        (
            "Failed to start nvml with error:  could not load NVML library",
            "gpu_driver_unusable",
            Category.SYSTEM_SOFTWARE,
        ),
    ],
)
def test_a_setup_that_cannot_run_here_stops_the_job(tmp_path, line, signature, category):
    assert answer_of(diagnose_text(tmp_path, f"{line}\n")) == (signature, FailureKind.CRASH, category, RetryAdvice.STOP)


def test_an_nccl_plugin_that_is_not_found_is_still_benign(tmp_path):
    line = (
        "node1:1697:1697 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
        "cannot open shared object file: No such file or directory\n"
    )
    assert diagnose_text(tmp_path, f"{STEPS}{line}").failure_kind is FailureKind.NONE


@pytest.mark.parametrize(
    "text",
    [
        '  File "/opt/Megatron-LM/megatron/training/arguments.py", line 561, in validate_args\n'
        "    assert num_layers % args.pipeline_model_parallel_size == 0, \\\n",
        'Megatron-LM/megatron/training/arguments.py", line 561, in validate_args\n'
        "[rank14]:     assert num_layers % args.pipeline_model_parallel_size == 0, \\\n",
    ],
)
def test_a_traceback_cut_to_its_frames_is_an_uncaught_exception(tmp_path, text):
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{text}")) == (
        "generic_uncaught_traceback",
        FailureKind.CRASH,
        Category.APPLICATION,
        RetryAdvice.STOP,
    )


def test_a_frame_gives_way_to_any_other_finding(tmp_path):
    text = '  File "/w/train.py", line 10, in main\nslurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n'
    assert diagnose_text(tmp_path, text).signature != "generic_uncaught_traceback"


def _announce(ranks, world=8, prefix="initializing ddp"):
    return "".join(f"{prefix}: GLOBAL_RANK: {r}, MEMBER: {r + 1}/{world}\n" for r in ranks)


@pytest.mark.parametrize("prefix", ["initializing ddp", "0: Initializing distributed"])
def test_processes_announcing_the_same_global_ranks_while_others_never_appear_are_a_launch_that_hangs(tmp_path, prefix):
    result = diagnose_text(tmp_path, "GPU available: True\n" + _announce([0, 1, 2, 3, 0, 1, 2, 3], prefix=prefix))
    assert answer_of(result) == ("global_rank_collision", FailureKind.HANG, Category.APPLICATION, RetryAdvice.STOP)


@pytest.mark.parametrize(
    "text",
    [
        _announce(range(8)) + _announce(range(8)),  # a restart in the same file: every rank again
        _announce([0, 1, 2, 3]),  # one node's log of a two-node job
        _announce([0, 1, 0, 1], world=4) + STEPS,  # the ranks formed and trained
    ],
)
def test_rank_announcements_of_a_restart_one_node_or_a_job_that_trained_are_no_failure(tmp_path, text):
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_the_dataloaders_shared_memory_hint_on_a_line_of_its_own_is_a_shm_too_small(tmp_path):
    line = "ERROR: This might be caused by insufficient shared memory (shm).\n"
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{line}")) == (
        "shm_too_small",
        FailureKind.CRASH,
        Category.APPLICATION,
        RetryAdvice.STOP,
    )


def test_volcanos_pod_evicted_event_is_an_eviction(tmp_path):
    line = "job_controller.go:305] Try to handle request <Queue: q, Job: ml/train, Task:worker, Event:PodEvicted>\n"
    assert answer_of(diagnose_text(tmp_path, f"{STEPS}{line}")) == (
        "pod_evicted",
        FailureKind.CRASH,
        Category.INFRASTRUCTURE,
        RetryAdvice.RETRY_SAME_NODES,
    )


def test_an_event_that_only_starts_with_pod_evicted_is_not_an_eviction(tmp_path):
    assert diagnose_text(tmp_path, f"{STEPS}Event: PodEvictedCount=0\n").failure_kind is FailureKind.NONE
