"""Recognition of failures as real logs print them (issue 9): wording of other driver, NCCL, PyTorch and
Slurm versions, lines cut by a terminal, the job's own decision to stop, launch and configuration
mistakes, and hangs ended by a watchdog or reported by a stall inspector. Each case is one log given to
``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.detection.normalize import normalize
from lazarus.detection.reader import diagnose_files
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

CRASH, HANG = FailureKind.CRASH, FailureKind.HANG
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES


def test_a_line_cut_mid_word_by_the_terminal_is_read_as_one_message(tmp_path):
    text = (
        "[rank1]:[E307 05:30:20.039566920 ProcessGroupNCCL.cpp:2057] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
        "Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collectiv\n"
        "e operation timeout: WorkNCCL(SeqNum=13, OpType=SCATTER, NumelIn=384, NumelOut=0, Timeout(ms)=1800000) "
        "ran for 1800085 milliseconds before timing out.\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "nccl_watchdog_timeout"
    assert "collective operation timeout" in result.evidence[0].text


def test_a_short_line_ending_in_a_word_is_not_joined_to_the_next(tmp_path):
    text = "RuntimeError: CUDA error: out of memory\nnext line in lower case\n"
    result = diagnose_text(tmp_path, text)
    assert result.signature == "cuda_oom"
    assert "next line" not in result.evidence[0].text


@pytest.mark.parametrize(
    ("text", "signature", "kind", "category", "advice"),
    [
        # the watchdog of torch versions before SeqNum was printed
        (
            "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
            "Timeout(ms)=1800000) ran for 1802691 milliseconds before timing out.",
            "nccl_watchdog_timeout",
            HANG,
            Category.UNKNOWN,
            SAME,
        ),
        # the training script stopped itself: a restart with the same settings diverges again
        ("[11:41:59.064379] Loss is nan, stopping training", "nan_loss_abort", CRASH, Category.APPLICATION, STOP),
        ("ValueError: Loss is NaN", "nan_loss_abort", CRASH, Category.APPLICATION, STOP),
        (
            "[INFO] [stage2.py:1628:step] [deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, "
            "reducing to 1",
            "loss_scale_minimum",
            CRASH,
            Category.APPLICATION,
            STOP,
        ),
        (
            " iteration     5426/  250000 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 |\n" * 3,
            "nan_grad_norm",
            CRASH,
            Category.APPLICATION,
            SAME,
        ),
        # NCCL errors as Horovod and old NCCL print them
        (
            "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error",
            "nccl_unhandled_cuda_error",
            CRASH,
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
        (
            "mlc-cluster-23:3070:3090 [0] include/shm.h:42 NCCL WARN Cuda failure 'invalid argument'",
            "nccl_unhandled_cuda_error",
            CRASH,
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
        (
            "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, "
            "opcode 1, len 0, vendor err 129",
            "ib_completion_error",
            CRASH,
            Category.INFRASTRUCTURE,
            SAME,
        ),
        # signals as torch elastic reports them
        (
            "E1007 12:45:33.652000 18678 torch/distributed/elastic/multiprocessing/api.py:869] failed "
            "(exitcode: -11) local_rank: 0 (pid: 18745) of binary: /usr/bin/python",
            "process_segfault",
            CRASH,
            Category.APPLICATION,
            SAME,
        ),
        (
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 12345 got signal: 15",
            "generic_external_signal",
            CRASH,
            Category.UNKNOWN,
            SAME,
        ),
        # storage
        (
            "[rank3]: OSError: [Errno 5] Input/output error: '/app/naifu555'",
            "storage_io_exception",
            CRASH,
            Category.INFRASTRUCTURE,
            SAME,
        ),
        (
            "RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file "
            "data/228: file write failed",
            "storage_write_failed",
            CRASH,
            Category.INFRASTRUCTURE,
            STOP,
        ),
        # GPU, driver and firmware wording without an Xid
        (
            "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.",
            "xid_79_fallen_off_bus",
            CRASH,
            Category.HARDWARE,
            EXCLUDE,
        ),
        (
            "CUDA error: uncorrectable NVLink error detected during the execution",
            "xid_74_nvlink",
            CRASH,
            Category.HARDWARE,
            EXCLUDE,
        ),
        (
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)",
            "gsp_reset_required",
            CRASH,
            Category.SYSTEM_SOFTWARE,
            EXCLUDE,
        ),
        (
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU.",
            "gpu_driver_unusable",
            CRASH,
            Category.SYSTEM_SOFTWARE,
            STOP,
        ),
        # rendezvous and Slurm wording of other versions
        (
            "RuntimeError: connect() timed out. Original timeout was 60000 ms.",
            "rendezvous_timeout",
            CRASH,
            Category.INFRASTRUCTURE,
            SAME,
        ),
        (
            "slurmstepd: *** JOB 1479012 CANCELLED AT 2015-02-04T06:33:25 *** on sh-2-3",
            "slurm_cancelled",
            CRASH,
            Category.APPLICATION,
            STOP,
        ),
        (
            "srun: error: Application launch failed: Job credential expired",
            "slurm_auth_failure",
            CRASH,
            Category.INFRASTRUCTURE,
            STOP,
        ),
        (
            "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on n1: this job is preempted.",
            "cloud_preemption",
            CRASH,
            Category.INFRASTRUCTURE,
            SAME,
        ),
    ],
)
def test_wordings_of_other_versions_are_recognised(tmp_path, text, signature, kind, category, advice):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        signature,
        kind,
        category,
        advice,
    )


@pytest.mark.parametrize(
    ("text", "signature", "kind"),
    [
        (
            "[12964845.761251] beegfs: mount(1516568): The config argument 'connClientPort' is invalid",
            "config_value_invalid",
            CRASH,
        ),
        (
            "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
            "nccl_network_config",
            CRASH,
        ),
        (
            "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
            "nccl_network_config",
            CRASH,
        ),
        (
            "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
            "(world_size=4, worker_count=8, timeout=0:30:00)",
            "store_barrier_world_mismatch",
            HANG,
        ),
        ("slurmstepd: error: execve(): python: No such file or directory", "launch_executable_missing", CRASH),
        ("Illegal instruction (core dumped)", "process_fpe_or_illegal_instruction", CRASH),
    ],
)
def test_launch_and_configuration_mistakes_stop_instead_of_retrying(tmp_path, text, signature, kind):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        signature,
        kind,
        Category.APPLICATION,
        STOP,
    )


def test_a_store_barrier_that_counts_the_world_size_is_not_a_failure(tmp_path):
    text = (
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
        "(world_size=4, worker_count=4, timeout=0:30:00)\n"
    )
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_the_batch_script_missing_on_a_node_blames_the_node_not_the_job(tmp_path):
    text = "slurmstepd: error: execve(): /tmp/slurmd/job2997813/slurm_script: No such file or directory\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category, result.retry_advice) == (
        "slurm_script_missing_on_node",
        Category.INFRASTRUCTURE,
        EXCLUDE,
    )


def test_a_healthy_loss_scale_overflow_is_still_benign(tmp_path):
    text = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


@pytest.mark.parametrize(
    ("text", "signature", "category", "advice"),
    [
        (
            "RuntimeError: CUDA error: the launch timed out and was terminated",
            "cuda_launch_failure",
            Category.UNKNOWN,
            SAME,
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
            "cuda_launch_failure",
            Category.UNKNOWN,
            SAME,
        ),
        ("RuntimeError: CUDA error: ECC error", "cuda_ecc_uncorrectable", Category.HARDWARE, EXCLUDE),
        (
            "RuntimeError: CUDA error: system not yet initialized",
            "gpu_fabric_not_initialized",
            Category.SYSTEM_SOFTWARE,
            EXCLUDE,
        ),
        (
            "node1:1:1 [0] init.cc:1330 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000",
            "nccl_invalid_usage",
            Category.APPLICATION,
            STOP,
        ),
        (
            "torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from "
            "[0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
            "rendezvous_timeout",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/scratch/out'",
            "storage_io_exception",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        (
            "kernel: GPFS: 6027-2713 Unable to access file system",
            "parallel_fs_unavailable",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        ("kernel: EXT4-fs (md0): Remounting filesystem read-only", "local_fs_error", Category.HARDWARE, EXCLUDE),
        (
            "kernel: mlx5_core 0000:3b:00.0: mlx5_fw_fatal_reporter_err_work:690:(pid 123): Driver is in error state. Unloading",
            "ib_nic_catastrophic",
            Category.HARDWARE,
            EXCLUDE,
        ),
        (
            "*** Error in `python': double free or corruption (!prev): 0x0000000001234567 ***",
            "heap_corruption",
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
    ],
)
def test_runtime_driver_storage_and_fabric_errors_get_the_table_s_advice(tmp_path, text, signature, category, advice):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (signature, category, advice)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("192.168.13.81: RuntimeError: boom", "RuntimeError: boom"),
        ("rdma-test-gpu-worker-1: ValueError: bad", "ValueError: bad"),
        ("(ActorModelRayActorBOX pid=12903, ip=10.0.0.3) KeyError: 'x'", "KeyError: 'x'"),
        ("[trainer0|0]:ncclInternalError: Internal check failed.", "ncclInternalError: Internal check failed."),
        ("[rank: 0] Received SIGTERM: 15", "Received SIGTERM: 15"),
        ("[Sat Oct 12 18:38:44 2024] INFO: task python:1 blocked", "INFO: task python:1 blocked"),
        ("[  +0.000844] nvidia 0000:03:00.0: AER: x", "nvidia 0000:03:00.0: AER: x"),
        (
            "E1030 11:42:16.325000 140014536193856 torch/distributed/elastic/multiprocessing/api.py:833] failed",
            "failed",
        ),
        ("[rank1]:[E206 16:45:19.244433255 ProcessGroupNCCL.cpp:1785] [PG 0 Rank 1] x", "[PG 0 Rank 1] x"),
    ],
)
def test_launcher_host_ray_torchx_and_pytorch_log_prefixes_are_stripped(line, message):
    assert normalize(line) == message


@pytest.mark.parametrize("line", ["RuntimeError: boom", "torch.distributed.DistBackendError: x", "ValueError: v"])
def test_an_exception_name_is_never_taken_for_a_prefix(line):
    assert normalize(line) == line


@pytest.mark.parametrize(
    ("text", "signature", "category", "advice"),
    [
        (
            "slurmstepd: error: Job 123 exceeded memory limit (1234 > 1000), being killed",
            "host_oom_invoked",
            Category.APPLICATION,
            STOP,
        ),
        ("srun: error: node2: task 8: Out Of Memory", "host_oom_invoked", Category.APPLICATION, STOP),
        (
            "srun: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)",
            "slurm_request_rejected",
            Category.APPLICATION,
            STOP,
        ),
        ("srun: error: prolog failed on node node2", "slurm_prolog_failed", Category.INFRASTRUCTURE, EXCLUDE),
    ],
)
def test_slurm_wordings_of_memory_limits_refused_requests_and_failed_prologs(
    tmp_path, text, signature, category, advice
):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (signature, category, advice)


def test_a_busy_allocation_is_not_a_refused_request(tmp_path):
    result = diagnose_text(tmp_path, "srun: error: Unable to allocate resources: Requested nodes are busy\n")
    assert result.signature != "slurm_request_rejected"


@pytest.mark.parametrize(
    ("text", "signature", "kind"),
    [
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
            "has failed. See inner exception for details.",
            "rendezvous_timeout",
            CRASH,
        ),
        (
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
            "for recv operation to complete",
            "gloo_collective_timeout",
            HANG,
        ),
        ("ERROR: Unexpected segmentation fault encountered in worker.", "process_segfault", CRASH),
    ],
)
def test_store_gloo_and_worker_failures_are_retried_not_blamed_on_the_code(tmp_path, text, signature, kind):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.retry_advice) == (signature, kind, SAME)


@pytest.mark.parametrize(
    ("text", "signature"),
    [
        (
            "[rank14]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 14] Timeout at NCCL work: 15734, last enqueued NCCL "
            "work: 15735, last completed NCCL work: 15733.",
            "nccl_watchdog_timeout",
        ),
        (
            "[rank5]:[E ProcessGroupNCCL.cpp:1595] [PG 0 Rank 5] Process group watchdog thread terminated with "
            "exception: [Rank 5] Watchdog caught collective operation timeout",
            "nccl_watchdog_timeout",
        ),
        (
            "[rank2]:[E1230 17:23:34.949429634 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
            "Exception (either an error or timeout) detected by watchdog at work: 18590",
            "generic_timeout_hang",
        ),
        ("TimeoutError: The operation timed out", "generic_timeout_hang"),
    ],
)
def test_hangs_ended_by_a_watchdog_or_a_timeout_are_hangs_in_every_wording(tmp_path, text, signature):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.retry_advice) == (signature, HANG, SAME)


def test_a_store_wait_timeout_is_a_rendezvous_failure_not_a_code_bug(tmp_path):
    text = "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg//0//cuda//0\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category, result.retry_advice) == (
        "rendezvous_timeout",
        Category.INFRASTRUCTURE,
        SAME,
    )


@pytest.mark.parametrize(("world", "workers"), [(4, 2), (16, 8), (8, 1)])
def test_ranks_still_arriving_at_the_store_barrier_are_not_a_failure(tmp_path, world, workers):
    text = (
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
        f"(world_size={world}, worker_count={workers}, timeout=0:30:00)\n"
    )
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_one_nan_gradient_norm_is_a_skipped_overflow_not_a_failure(tmp_path):
    text = " iteration     5426/  250000 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 |\n"
    assert diagnose_text(tmp_path, text).failure_kind is FailureKind.NONE


def test_a_native_bad_alloc_is_the_host_running_out_of_memory(tmp_path):
    result = diagnose_text(tmp_path, "terminate called after throwing an instance of 'std::bad_alloc'\n")
    assert (result.signature, result.retry_advice) == ("host_oom_invoked", STOP)


def test_warnings_are_noted_never_acted_on(tmp_path):
    # Horovod's stall inspector is one of these in a live job; in a finished file whose last word it is, its own
    # "more than 60 seconds" makes a hang (tests/detection/test_stalls_slowdowns_and_signals.py).
    text = (
        "kernel: LustreError: 11-0: scratch-OST0001-osc: operation ost_write to node 10.0.0.1@o2ib failed: rc = -107\n"
        "kernel: NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out\n"
        "Maintenance event: Instance is scheduled for maintenance\n"
        "kernel: nvme nvme0: I/O 123 QID 4 timeout, aborting\n"
        "29: srun: Job 9479148 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
        "kernel: bnxt_en 0000:3b:00.0 eth0: NIC Link is Down\n"
    )  # an ibstat port in physical state Polling has no link: a failure since the seventh pass (ib_port_not_active)
    result = diagnose_text(tmp_path, text)
    assert result.failure_kind is FailureKind.NONE and result.retry_advice is None
    assert any("lustre_client_error" in note for note in result.notes)


@pytest.mark.parametrize(
    ("text", "signature", "category", "advice"),
    [
        (
            "kernel: mce: Uncorrected hardware memory error in user-access at 1234",
            "host_mce_uncorrected",
            Category.HARDWARE,
            EXCLUDE,
        ),
        (
            "kernel: nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
            "nvme_failure",
            Category.HARDWARE,
            EXCLUDE,
        ),
        (
            "NCCL WARN NET/IB : Got async event : local work queue catastrophic error",
            "ib_qp_fatal",
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
        (
            "Pod was terminated in response to imminent node shutdown.",
            "cloud_preemption",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        ("    Reason: OOMKilled", "host_oom_killer", Category.APPLICATION, STOP),
        (
            "docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
            "process caused: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.1",
            "gpu_driver_unusable",
            Category.SYSTEM_SOFTWARE,
            STOP,
        ),
    ],
)
def test_host_memory_disks_nics_maintenance_and_containers(tmp_path, text, signature, category, advice):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (signature, category, advice)


def test_a_new_record_after_a_long_line_ending_in_a_word_is_not_joined_to_it(tmp_path):
    text = (
        "node1: [2024-05-01 12:00:00] Step 1200 of the data loader finished, prefetching the next shard for rank\n"
        "node2: Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"
    )
    path = tmp_path / "job.log"
    path.write_text(text)
    result = diagnose_files([path], known_nodes=["node1", "node2"])
    assert (result.signature, result.implicated_nodes) == ("gpu_lost", ["node2"])
