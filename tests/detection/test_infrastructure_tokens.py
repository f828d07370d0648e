"""Recognition by stable tokens, fourth pass of issue 9 (hardware, system software, infrastructure): the GPU
driver's GSP reports, CUDA's contained error, Xid reports in every written form, ESTALE against a dead mount,
the stuck NCCL watchdog, Slurm's expired credential and task-failure cancellation, and failed ibverbs calls.
Each case is one log given to ``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.detection.normalize import normalize
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

CRASH, HANG, NONE = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES


@pytest.mark.parametrize(
    "text",
    [
        "[  112.004411] NVRM: GPU3 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 5000 diff 7000 timeout 5200",
        "Jun  3 04:10:00 gpu17 kernel: NVRM: RmInitAdapter: Cannot initialize GSP firmware RM",
        "NVRM: GPU1 _kgspLogRpcTimeout: ***************************** GSP Timeout *****************************",
        "NVRM: GPU2 kgspHealthCheck_GH100: ********** GSP-CrashCat Report **********",
    ],
)
def test_the_driver_naming_the_gsp_as_the_failing_part_is_a_firmware_fault_that_excludes_the_node(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "gsp_firmware_fault",
        CRASH,
        Category.SYSTEM_SOFTWARE,
        EXCLUDE,
    )


def test_an_xid_62_whose_halt_the_driver_blames_on_the_gsp_is_the_firmware_fault(tmp_path):
    log = (
        "NVRM: Xid (PCI:0000:41:00): 62, 11aa22bb 0000c3d8 00000000 206dae68\n"
        "NVRM: GPU0 _kgspRpcGspEventPmuHalted: Received signal from GSP that PMU has halted.\n"
    )
    result = diagnose_text(tmp_path, log)
    assert (result.signature, result.category, result.retry_advice) == (
        "gsp_firmware_fault",
        Category.SYSTEM_SOFTWARE,
        EXCLUDE,
    )


def test_a_gsp_line_does_not_outrank_a_gpu_that_fell_off_the_bus(tmp_path):
    log = (
        "NVRM: Xid (PCI:0000:41:00): 79, pid=900, name=python, GPU has fallen off the bus.\n"
        "NVRM: GPU0 _kgspLogRpcTimeout: ***************************** GSP Timeout *****************************\n"
    )
    assert diagnose_text(tmp_path, log).signature == "xid_79_fallen_off_bus"


@pytest.mark.parametrize(
    "text",
    [
        "CUDA_ERROR_CONTAINED: Invalid access of peer GPU memory over nvlink or a hardware error",
        "RuntimeError: CUDA error: cudaErrorContained",
        "[rank5]: jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: : CUDA_ERROR_CONTAINED",
    ],
)
def test_cudas_contained_error_is_a_hardware_fault_that_excludes_the_node(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "cuda_error_contained",
        Category.HARDWARE,
        EXCLUDE,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Xid 149, NETIR_LINK_EVT Fatal XC0 i0 Link 03", "NVRM: Xid (?): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 03"),
        (
            "kernel: NVRM: Xid (PCI:0000:1b:00): 45, pid=77, name=python3, Ch 00000004 caused by previous Xid 74",
            "NVRM: Xid (PCI:0000:1b:00): 74, cleanup reported as Xid 45, pid=77, name=python3, Ch 00000004",
        ),
        (
            "NVRM: Xid (PCI:0000:1b:00): 45, pid=77, name=python3, Ch 00000004",
            "NVRM: Xid (PCI:0000:1b:00): 45, pid=77, name=python3, Ch 00000004",
        ),
    ],
)
def test_an_xid_report_is_put_in_the_drivers_own_form_before_matching(line, message):
    assert normalize(line) == message


def test_a_bare_xid_report_is_read_like_the_drivers_own(tmp_path):
    result = diagnose_text(tmp_path, "Xid 149, NETIR_LINK_EVT Fatal XC0 i0 Link 03\n")
    assert (result.signature, result.category, result.retry_advice) == ("xid_nvlink5", Category.HARDWARE, EXCLUDE)


def test_an_xid_45_that_names_its_cause_is_read_as_that_cause(tmp_path):
    log = "kernel: NVRM: Xid (PCI:0000:1b:00): 45, pid=77, name=python3, Ch 00000004 caused by previous Xid 149\n"
    result = diagnose_text(tmp_path, log)
    assert (result.signature, result.category, result.retry_advice) == ("xid_nvlink5", Category.HARDWARE, EXCLUDE)


def test_an_xid_45_alone_stays_a_consequence(tmp_path):
    result = diagnose_text(tmp_path, "kernel: NVRM: Xid (PCI:0000:1b:00): 45, pid=77, name=python3, Ch 00000004\n")
    assert (result.signature, result.retry_advice) == ("xid_45_preemptive_cleanup", SAME)


@pytest.mark.parametrize(
    "text",
    [
        "OSError: [Errno 116] Stale file handle: '/scratch/run7/train.log'",
        "OSError: Unable to create file (unable to fstat file, errno = 116, error message = 'Stale file handle')",
    ],
)
def test_a_stale_file_handle_belongs_to_the_file_and_is_retried_on_the_same_nodes(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice, result.implicated_nodes) == (
        "storage_stale_handle",
        Category.INFRASTRUCTURE,
        SAME,
        [],
    )


def test_a_dead_mount_still_excludes_its_node(tmp_path):
    result = diagnose_text(
        tmp_path, "OSError: [Errno 107] Transport endpoint is not connected: '/mnt/objstore/shards'\n"
    )
    assert (result.signature, result.retry_advice) == ("storage_mount_dead", EXCLUDE)


@pytest.mark.parametrize(
    "text",
    [
        "[rank3]:[E612 09:00:00.1 ProcessGroupNCCL.cpp:1500] [PG ID 0 PG GUID 0 Rank 3] ProcessGroupNCCL's watchdog got "
        "stuck for 600 seconds without making progress in monitoring enqueued collectives.",
        "[rank1]:[E ProcessGroupNCCL.cpp:1300] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated "
        "after dumping debug info. workMetaList_.size()=3",
    ],
)
def test_a_stuck_nccl_watchdog_is_a_hang_whose_message_names_no_cause(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "nccl_watchdog_stuck",
        HANG,
        Category.UNKNOWN,
        SAME,
    )


def test_a_launch_refused_for_an_expired_credential_blames_no_node(tmp_path):
    result = diagnose_text(
        tmp_path, "srun: error: Task launch for 4410.0 failed on node gpu-a07: Job credential expired\n"
    )
    assert (result.signature, result.category, result.implicated_nodes) == (
        "slurm_auth_failure",
        Category.INFRASTRUCTURE,
        [],
    )


def test_a_launch_that_failed_for_another_reason_still_excludes_the_node(tmp_path):
    result = diagnose_text(
        tmp_path, "srun: error: Task launch for 4410.0 failed on node gpu-a07: Communication connection failure\n"
    )
    assert (result.signature, result.retry_advice, result.implicated_nodes) == (
        "slurm_launch_failed",
        EXCLUDE,
        ["gpu-a07"],
    )


def test_a_step_cancelled_due_to_task_failure_is_the_consequence_of_a_failed_task(tmp_path):
    line = "[2025-02-01T10:00:00.123] error: *** STEP 991.0 ON nid000123 CANCELLED AT 2025-02-01T10:00:00 DUE TO TASK FAILURE ***\n"
    alone = diagnose_text(tmp_path, line)
    assert (alone.signature, alone.category, alone.retry_advice) == ("slurm_step_cancelled", Category.UNKNOWN, SAME)
    (tmp_path / "with_cause").mkdir()
    caused = diagnose_text(
        tmp_path / "with_cause", "3: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + line
    )
    assert caused.signature == "cuda_oom"


@pytest.mark.parametrize(
    "text",
    [
        "gpu3:5120:5190 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument",
        "gpu3:5120:5190 [4] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev "
        "mlx5_2:1, curr state INIT, next state RTR",
        # ENOMEM creating a QP is the locked-memory limit: test_device_and_fabric_tokens.py (seventh pass)
        "gpu3:5120:5190 [1] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Invalid argument",
    ],
)
def test_a_failed_ibverbs_connection_call_is_an_nccl_system_failure(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "ib_verbs_call_failed",
        CRASH,
        Category.SYSTEM_SOFTWARE,
        SAME,
    )


def test_failing_to_open_the_verbs_device_is_no_failure_since_nccl_falls_back_to_sockets(tmp_path):
    result = diagnose_text(
        tmp_path, "gpu3:5120:5120 [1] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"
    )
    assert result.failure_kind is NONE


@pytest.mark.parametrize(
    "text",
    [
        "stderr: nvidia-container-cli.real: initialization error: driver error: failed to process request: unknown",
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
        "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit "
        "status 1, stdout: , stderr: nvidia-container-cli: initialization error: load library failed: "
        "libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown",
    ],
)
def test_a_container_runtime_that_cannot_initialise_the_nodes_driver_excludes_the_node(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "container_gpu_init_failed",
        Category.SYSTEM_SOFTWARE,
        EXCLUDE,
    )


def test_an_image_whose_cuda_requirement_the_driver_does_not_meet_still_stops(tmp_path):
    text = (
        "OCI runtime create failed: container_linux.go:380: starting container process caused: "
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.retry_advice) == ("gpu_driver_unusable", STOP)


def test_no_cuda_device_in_the_container_runtimes_lower_case_is_a_lost_gpu(tmp_path):
    text = "stderr: nvidia-container-cli: initialization error: cuda error: no cuda-capable device is detected\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category, result.retry_advice) == ("gpu_lost", Category.HARDWARE, EXCLUDE)


def test_cudas_system_not_ready_as_its_samples_print_it_is_the_fabric_not_initialised(tmp_path):
    result = diagnose_text(tmp_path, "Failed to copy vector B (error code system not yet initialized)!\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "gpu_fabric_not_initialized",
        Category.SYSTEM_SOFTWARE,
        EXCLUDE,
    )


def test_open_mpis_lost_peer_notice_is_a_consequence_retried_as_is(tmp_path):
    log = (
        "An MPI communication peer process has unexpectedly disconnected.  This\n"
        "usually indicates a failure in the peer process (e.g., a crash or\n"
    )
    alone = diagnose_text(tmp_path, log)
    assert (alone.signature, alone.failure_kind, alone.category, alone.retry_advice) == (
        "mpi_peer_disconnected",
        CRASH,
        Category.UNKNOWN,
        SAME,
    )
    (tmp_path / "with_cause").mkdir()
    caused = diagnose_text(
        tmp_path / "with_cause", "2: RuntimeError: CUDA error: an illegal memory access was encountered\n" + log
    )
    assert caused.signature == "cuda_illegal_address"


@pytest.mark.parametrize(
    "text",
    [
        "The node with client ID 0a1b2c3d has been marked dead because the monitor has missed too many heartbeats from it.",
        "The node with node id: 9f8e7d and address: 10.1.2.3 and node name: 10.1.2.3 has been marked dead because the "
        "detector has missed too many heartbeats from it.",
    ],
)
def test_a_node_ray_declared_dead_is_a_failure_of_unknown_cause_retried(tmp_path, text):
    """Missed heartbeats say the node is gone, not why (a crash, an OOM kill, a partition): 2 of the 3 real
    excerpts were resolved as causes other than the network."""
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "cluster_member_marked_dead",
        Category.UNKNOWN,
        SAME,
    )


@pytest.mark.parametrize(
    "text",
    [
        "[gpu7:16223:0:16223] ib_mlx5_log.c:177  Local protection on mlx5_0:1/IB (synd 0x4 vend 0x51 hw_synd 0/2)",
        "[gpu7:16223:0:16223] ib_mlx5_log.c:177  Remote access error on mlx5_2:1/RoCE (synd 0x13 vend 0x88 hw_synd 0/0)",
    ],
)
def test_a_failed_work_completion_ucx_reports_by_its_ibverbs_status_is_a_crash_of_unknown_cause(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "ucx_completion_error",
        CRASH,
        Category.UNKNOWN,
        SAME,
    )


def test_ucxs_transport_retry_exceeded_keeps_its_own_signature(tmp_path):
    text = "[gpu7:16223:0:16223] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)\n"
    assert diagnose_text(tmp_path, text).signature == "ucx_transport_retry"


def test_a_port_error_in_nccls_newer_async_error_event_wording_is_a_port_fault(tmp_path):
    text = "gpu7:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_6:1 Got async error event: port error\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category) == ("ib_port_down", Category.INFRASTRUCTURE)


def test_the_heartbeat_monitor_terminating_the_process_is_a_hang_even_when_the_stuck_line_is_wrapped(tmp_path):
    log = (
        "[rank6]:[E429 13:55:49.384 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL'\n"
        "s watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.\n"
        "[rank6]:[F429 14:03:49.385 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0(default_pg) Rank 6] Terminating the "
        "process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n"
    )
    result = diagnose_text(tmp_path, log)
    assert (result.signature, result.failure_kind, result.retry_advice) == ("nccl_watchdog_stuck", HANG, SAME)


@pytest.mark.parametrize(
    "text",
    [
        "gpu2:811:840 [0] graph/xml.h:77 NCCL WARN Attribute busid of node nic not found",
        "[3] graph/rings.cc:38 NCCL WARN Error : ring 1 does not loop back to start (5 != 7).",
        "gpu2:811:840 [0] graph/topo.h:230 NCCL WARN Could not find NET with id 2",
    ],
)
def test_nccls_topology_code_failing_to_model_the_node_stops(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "nccl_topology_error",
        Category.SYSTEM_SOFTWARE,
        STOP,
    )


def test_nccls_topology_search_falling_back_to_a_simpler_order_is_no_failure(tmp_path):
    text = "gpu2:811:840 [0] graph/search.cc:1135 NCCL WARN Could not find a path for pattern 4, falling back to simple order\n"
    assert diagnose_text(tmp_path, text).failure_kind is NONE


def test_a_nic_whose_firmware_health_check_reports_a_fatal_error_excludes_the_node(tmp_path):
    text = "May  2 03:00:00 gpu9 kernel: mlx5_core 0000:c1:00.0: poll_health:800:(pid 0): Fatal error 3 detected\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category, result.retry_advice) == (
        "ib_nic_catastrophic",
        Category.HARDWARE,
        EXCLUDE,
    )


def test_a_fatal_firmware_first_hardware_error_excludes_the_node(tmp_path):
    log = (
        "{2}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 1\n"
        "{2}[Hardware Error]: event severity: fatal\n"
    )
    result = diagnose_text(tmp_path, log)
    assert (result.signature, result.category, result.retry_advice) == (
        "host_mce_uncorrected",
        Category.HARDWARE,
        EXCLUDE,
    )


def test_a_corrected_firmware_first_hardware_error_is_no_failure(tmp_path):
    result = diagnose_text(tmp_path, "{2}[Hardware Error]: event severity: corrected\n")
    assert result.failure_kind is NONE


def test_a_libfabric_request_completed_with_an_error_is_a_fabric_failure_retried(tmp_path):
    text = "gpu9:77:90 [2] NCCL WARN NET/OFI Request 0x7f00aa completed with error. RC: 5. Error: 5 (Input/output error).\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category, result.retry_advice) == (
        "ofi_completion_error",
        Category.INFRASTRUCTURE,
        SAME,
    )


def test_an_nfs_mount_that_never_happened_is_a_crash_while_a_silent_server_is_a_hang(tmp_path):
    failed = diagnose_text(tmp_path, "mount.nfs: Connection timed out\n")
    assert (failed.signature, failed.failure_kind, failed.category, failed.retry_advice) == (
        "nfs_mount_failed",
        CRASH,
        Category.INFRASTRUCTURE,
        SAME,
    )
    (tmp_path / "mounted").mkdir()
    silent = diagnose_text(tmp_path / "mounted", "[ 812.004] nfs: server fs2 not responding, still trying\n")
    assert (silent.signature, silent.failure_kind) == ("nfs_not_responding", HANG)


def test_a_compute_engine_preemption_notice_is_a_preemption_retried(tmp_path):
    result = diagnose_text(tmp_path, "2024-03-01T10:00:00Z gcp-vm-7 Instance was preempted.\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "cloud_preemption",
        Category.INFRASTRUCTURE,
        SAME,
    )


@pytest.mark.parametrize(
    "text",
    [
        "[Fri May 31 00:54:38 2024] LustreError: 31377:0:(mgc_request.c:612:do_requeue()) failed processing log: -5",
        "LustreError: 11-0: scratch-MDT0000-mdc-ffff: operation mds_reint to node 10.0.0.9@o2ib failed: -19",
        "LNetError: 120-3: Refusing connection from 10.0.0.8 for 10.0.0.9@tcp: No matching NI",
    ],
)
def test_lustres_kernel_tag_is_never_read_as_a_python_exception(tmp_path, text):
    result = diagnose_text(tmp_path, text + "\n")
    assert result.failure_kind is NONE


def test_a_lustre_mount_the_client_refused_is_a_crash_of_its_software(tmp_path):
    text = "LustreError: 4410:0:(super25.c:187:lustre_fill_super()) llite: Unable to mount <unknown>: rc = -2\n"
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind, result.category) == (
        "lustre_mount_failed",
        CRASH,
        Category.SYSTEM_SOFTWARE,
    )
