"""Recognition from the training frameworks' own message catalogues, ninth pass of issue 9: the strings that
PyTorch 2.14.1 (libtorch_cuda.so and libtorch_cpu.so: ProcessGroupNCCL, TCPStore; torch/distributed/elastic,
torch/utils/data, torch/_dynamo and torch/_inductor), DeepSpeed 0.19.8 (its launcher), Horovod 0.28.1
(common.h, its runners), Ray 2.58.0 (ray/exceptions.py) and Lightning 2.6.6 (its SLURM signal connector) print.
Each line here is built from a format string of the wheel or sdist, not copied from a corpus excerpt. Every
family also pins lines that must stay "no failure": the framework prints them when it is informational, retries
by itself, or exits normally."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, HANG, NONE = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES
APP, INFRA, UNKNOWN = Category.APPLICATION, Category.INFRASTRUCTURE, Category.UNKNOWN

NCCL_PREFIX = "[rank3]:[E1201 05:00:00.123456 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
ELASTIC = "E1201 05:00:00.123000 4242 torch/distributed/elastic/"
DS_LAUNCH = "[2026-12-01 05:00:00,000] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py']"


# ------------------------------------------------------------------------------- ProcessGroupNCCL (libtorch_cuda)


@pytest.mark.parametrize(
    "line",
    [
        # a rank whose own watchdog saw nothing, told through the store that another rank's collective timed out
        NCCL_PREFIX + "Received a dump signal due to a collective timeout from rank 5 and we will try our best to "
        "dump the debug info. Last enqueued NCCL work: 1201, last completed NCCL work: 1200.",
        NCCL_PREFIX + "Observed flight recorder dump signal from another rank via TCPStore.",
        # TORCH_NCCL_BLOCKING_WAIT: "Work <WorkNCCL> timed out in blocking wait."
        NCCL_PREFIX + "Work WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
        "timed out in blocking wait.",
    ],
)
def test_a_collective_timeout_seen_from_another_rank_or_in_blocking_wait_is_the_watchdog_timeout(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("nccl_watchdog_timeout", HANG, UNKNOWN, SAME)


def test_the_heartbeat_monitors_report_of_a_stuck_watchdog_is_a_hang(tmp_path):
    line = NCCL_PREFIX + "First PG on this rank that detected no heartbeat of its watchdog."
    assert answer(tmp_path, line + "\n") == ("nccl_watchdog_stuck", HANG, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        NCCL_PREFIX.replace("[E1201", "[I1201") + "Process group watchdog thread terminated normally",
        NCCL_PREFIX + "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled.",
    ],
)
def test_the_watchdogs_normal_exit_and_its_debug_notes_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------ c10d store (libtorch_cpu)


def test_a_store_connection_the_server_closed_is_a_lost_store_not_the_programs_exception(tmp_path):
    line = (
        "torch.distributed.DistStoreError: Failed to recv, got 0 bytes. Connection was likely closed. "
        "Did the remote server shutdown or crash?"
    )
    assert answer(tmp_path, line + "\n") == ("store_socket_lost", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "[W1201 05:00:00.123456 socket.cpp:759] [c10d] The server socket on [::]:29500 has timed out, will retry.",
        "[I1201 05:00:00.123456 socket.cpp:759] [c10d] The client socket will attempt to connect to an IPv6 "
        "address of (node01, 29500).",
    ],
)
def test_the_stores_retries_and_connection_notes_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------- torchelastic and launchers


@pytest.mark.parametrize(
    "line",
    [
        ELASTIC + "timer/local_timer.py:99] Reaping worker_id=[4242]. Expired timers: ['step']",
        "ERROR:torch.distributed.elastic.timer.file_based_local_timer:Reaping worker_pid=[4242]. Expired timers: "
        "['step', 'eval']",
    ],
)
def test_a_worker_killed_by_torchelastics_expiration_timer_is_a_hang(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("elastic_timer_expired", HANG, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        DS_LAUNCH + " exits with return code = 1",
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the "
        "job to be terminated. The first process to do so was:",
        "RuntimeError: mpirun failed with exit code 1",
    ],
)
def test_the_other_launchers_summaries_of_a_failed_worker_read_like_torchruns(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("elastic_child_failed", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    ("code", "signature"),
    [("-11", "process_segfault"), ("-6", "process_aborted"), ("-9", "process_killed_sigkill"), ("-15", None)],
)
def test_deepspeeds_negative_return_code_is_read_by_its_signal(tmp_path, code, signature):
    result = diagnose_text(tmp_path, f"{DS_LAUNCH} exits with return code = {code}\n")
    if signature is None:  # SIGTERM: the external-signal family
        assert result.signature == "generic_external_signal"
    else:
        assert result.signature == signature


@pytest.mark.parametrize(
    "line",
    [
        "[2026-12-01 05:00:00,000] [INFO] [launch.py:351:main] Process 4242 exits successfully.",
        DS_LAUNCH + " exits with return code = 0",
        "I1201 05:00:00.123000 4242 torch/distributed/elastic/agent/server/api.py:889] Local worker group finished "
        "(WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish",
        # the rendezvous's graceful exit: "does not mean a failure" (rendezvous/api.py)
        "torch.distributed.elastic.rendezvous.api.RendezvousGracefulExitError: Node node07_4242_0 is not part of "
        "the rendezvous",
    ],
)
def test_a_launchers_normal_exit_and_a_graceful_rendezvous_exit_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        # torch 2.14.1 torch/multiprocessing/spawn.py: ProcessExitedException's two forms
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with exit code 1",
            "elastic_child_failed",
        ),
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL",
            "process_killed_sigkill",
        ),
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGABRT",
            "process_aborted",
        ),
        # lightning 2.6.6 subprocess_script.py: the observer that kills the other ranks after one ended
        (
            "[rank: 1] Child process with PID 4242 terminated with code 1. Forcefully terminating all other processes "
            "to avoid zombies \N{ZOMBIE}",
            "elastic_child_failed",
        ),
        (
            "[rank: 1] Child process with PID 4242 terminated with code -9. Forcefully terminating all other processes",
            "process_killed_sigkill",
        ),
        (
            "[rank: 1] Child process with PID 4242 terminated with code -11. Forcefully terminating all other processes",
            "process_segfault",
        ),
    ],
)
def test_torch_spawn_and_lightnings_observer_report_a_dead_worker_by_its_exit_code_or_signal(tmp_path, line, signature):
    assert diagnose_text(tmp_path, line + "\n").signature == signature


# ------------------------------------------------------------------------------------------------ DataLoader


def test_a_dataloader_that_waited_past_its_timeout_is_a_hang(tmp_path):
    assert answer(tmp_path, "RuntimeError: DataLoader timed out after 120 seconds\n") == (
        "dataloader_timeout",
        HANG,
        UNKNOWN,
        SAME,
    )


def test_a_dataloader_timeout_option_error_stays_the_programs_exception(tmp_path):
    result = diagnose_text(tmp_path, "ValueError: timeout option should be non-negative\n")
    assert (result.signature, result.category, result.retry_advice) == ("python_exception", APP, STOP)


# -------------------------------------------------------------------------------------------- torch.cuda


def test_memory_cudnn_could_not_get_outside_the_caching_allocator_is_a_cuda_oom(tmp_path):
    line = (
        "RuntimeError: CUDA ran out of memory outside PyTorch's allocator. If this workload uses many dynamic "
        "shapes, cuDNN may need additional device memory to JIT-compile shape-specialized kernels."
    )
    assert answer(tmp_path, line + "\n") == ("cuda_oom", CRASH, APP, STOP)


# ------------------------------------------------------------------------------------ torch.compile (dynamo/inductor)


@pytest.mark.parametrize(
    "line",
    [
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped",
        "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True.",
        "torch._inductor.exc.InductorError: LoweringException: AssertionError:",
        "torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in "
        "torch._inductor.config.cpp.cxx: (None, 'g++')",
    ],
)
def test_a_torch_compile_failure_is_the_programs_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("torch_compile_failed", CRASH, APP, STOP)


def test_a_cuda_error_inside_a_compile_is_read_by_its_own_signature(tmp_path):
    line = (
        "torch._inductor.exc.InductorError: RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"
    )
    assert diagnose_text(tmp_path, line + "\n").signature == "cuda_illegal_address"


@pytest.mark.parametrize(
    "line",
    [
        "W1201 05:00:00.123000 4242 torch/_dynamo/convert_frame.py:964] torch._dynamo hit config.recompile_limit (8)",
        "W1201 05:00:00.123000 4242 torch/_dynamo/convert_frame.py:964] torch._dynamo hit config.cache_size_limit (8)",
    ],
)
def test_dynamos_recompile_limit_warning_stays_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------------------- Ray


@pytest.mark.parametrize(
    "line",
    [
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
        "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check "
        "python-core-worker-*.log files for more information.",
        "ray.exceptions.ActorUnavailableError: The actor abc is unavailable: The actor is temporarily unavailable: "
        "RpcError. The task may or may not have been executed on the actor.",
        "ray.exceptions.OwnerDiedError: Failed to retrieve object abc. The object's owner has exited.",
    ],
)
def test_a_dead_ray_actor_or_worker_is_a_victim_not_the_programs_exception(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("ray_worker_died", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "ray.exceptions.NodeDiedError: Task failed due to the node (node_id: abc) it was running on dying.",
        "ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check raylet.out for more information.",
        "[2026-12-01 05:00:00,000 W 4242 4242] gcs_node_manager.cc:120: Node is dead because the health check failed.",
    ],
)
def test_a_dead_ray_node_or_raylet_reads_like_a_node_marked_dead(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("cluster_member_marked_dead", CRASH, UNKNOWN, SAME)


def test_rays_out_of_memory_error_is_host_memory_not_the_gpus(tmp_path):
    line = "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."
    assert answer(tmp_path, line + "\n") == ("ray_memory_monitor_kill", CRASH, APP, STOP)


def test_rays_out_of_disk_error_is_a_full_disk(tmp_path):
    assert answer(tmp_path, "ray.exceptions.OutOfDiskError: Local disk is full\n") == (
        "storage_no_space",
        CRASH,
        INFRA,
        STOP,
    )


def test_a_ray_task_error_alone_is_the_tasks_exception_and_yields_to_the_cause_it_wraps(tmp_path):
    wrapper = "ray.exceptions.RayTaskError(RuntimeError): ray::TrainWorker.train() (pid=4242, ip=10.0.0.7)\n"
    assert answer(tmp_path, wrapper) == ("ray_task_error", CRASH, APP, STOP)
    cause = "RuntimeError: DataLoader worker (pid 51234) is killed by signal: Killed.\n"
    assert diagnose_text(tmp_path, wrapper + cause).signature == "dataloader_worker_killed"


def test_rays_object_spilling_note_stays_no_failure(tmp_path):
    assert kind_of(tmp_path, "(raylet) Spilled 2048 MiB, 4 objects, write throughput 512 MiB/s.") is NONE


def test_an_actor_that_died_of_its_own_creation_error_is_the_programs_exception_not_a_dead_worker(tmp_path):
    line = "ray.exceptions.RayActorError: The actor died because of an error raised in its creation task"
    assert answer(tmp_path, line + "\n") == ("python_exception", CRASH, APP, STOP)


# ---------------------------------------------------------------------------------------------------- Horovod


def test_horovods_shut_down_error_on_the_other_ranks_is_a_victim(tmp_path):
    line = (
        "horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused by an "
        "exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of "
        "the ranks finished execution."
    )
    assert answer(tmp_path, line + "\n") == ("horovod_shut_down_by_peer", CRASH, UNKNOWN, SAME)


def test_horovods_stall_inspector_shutting_the_job_down_is_a_hang(tmp_path):
    line = (
        "[2026-12-01 05:00:00.000000: E /tmp/pip/horovod/common/stall_inspector.cc:105] One or more rank "
        '(marked by "!") is stalled for longer than 600 seconds. Will shutdown.'
    )
    assert answer(tmp_path, line + "\n") == ("horovod_stall_shutdown", HANG, UNKNOWN, SAME)


def test_horovods_elastic_host_update_stays_no_failure(tmp_path):
    assert kind_of(tmp_path, "horovod.common.exceptions.HostsUpdatedInterrupt\n") is NONE


# -------------------------------------------------------------------------------------------------- Lightning


@pytest.mark.parametrize("line", ["handling SIGUSR1", "requeing job 4242...", "Requeued SLURM job: 4242"])
def test_lightnings_own_slurm_requeue_stays_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------------ the prefilter


@pytest.mark.parametrize(
    "signature_id",
    [
        "elastic_graceful_exit",
        "elastic_timer_expired",
        "horovod_shut_down_by_peer",
        "horovod_stall_shutdown",
        "dataloader_timeout",
        "torch_compile_failed",
        "ray_task_error",
    ],
)
def test_the_frameworks_keywords_start_with_a_capital_so_the_prefilter_stops_nowhere_new(signature_id):
    """A keyword on a module path ("_dynamo.exc.") or a lower-case word would stop the prefilter at many positions
    of healthy lines (docs/adding-a-signature.md); the exception class names and message prefixes start with a
    capital."""
    keywords = default_catalogue().get(signature_id).keywords
    assert all(k[0].isupper() for k in keywords), keywords


# ------------------------------------------------------------------------------------------------- accelerate


def test_accelerates_old_kernel_warning_stays_no_failure(tmp_path):
    """accelerate 1.15.0 utils/other.py warns at start-up; the word "hang" in it is a possibility, not a report."""
    line = (
        "Detected kernel version 4.18.0, which is below the recommended minimum of 5.5.0; this can cause the "
        "process to hang. It is recommended to upgrade the kernel to the minimum version or higher."
    )
    assert kind_of(tmp_path, line) is NONE
