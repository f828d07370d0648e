"""Recognition from the other accelerators', XLA's and the storage clients' own message catalogues, ninth pass of
issue 9: the strings that AMD's amdgpu and amdkfd kernel drivers (linux-source-6.1 6.1.176, printk formats of
drivers/gpu/drm/amd), HIP and the ROCm runtime (libamdhip64-5 and libhsa-runtime64-1 5.2.3), jaxlib 0.10.2 and
tensorflow 2.21.0 (the coordination service, the collective executor, errors_impl.py), botocore 1.44.8,
google-api-core 2.44.0, gcsfs 2026.10.1, urllib3 2.8.0 and the kernel's btrfs and SMB clients print. Each line is
built from a format string of the artefact, not copied from a corpus excerpt. Every family also pins lines that
must stay "no failure": the software prints them when it is informational, or retries by itself."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, HANG, NONE = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
APP, HW, INFRA, SYS, UNKNOWN = (
    Category.APPLICATION,
    Category.HARDWARE,
    Category.INFRASTRUCTURE,
    Category.SYSTEM_SOFTWARE,
    Category.UNKNOWN,
)
KERNEL = "Dec  1 02:00:01 gpu7 kernel: "


# ------------------------------------------------------------------------------------- amdgpu and amdkfd (Linux 6.1)


@pytest.mark.parametrize(
    "line",
    [
        # mes_v11_0.c, amdkfd/kfd_device_queue_manager.c: the scheduler firmware and the command processor stop
        "[drm:mes_v11_0_submit_pkt_and_poll_completion [amdgpu]] *ERROR* MES failed to response msg=3",
        "amdgpu: MES might be in unrecoverable state, issue a GPU reset",
        "amdgpu: The cp might be in an unrecoverable state due to an unsuccessful queues preemption",
        # pm/swsmu/smu_cmn.c: SMU_RESP_NONE
        "amdgpu 0000:43:00.0: amdgpu: SMU: I'm not done with your previous command: SMN_C2PMSG_66:0x00000006 "
        "SMN_C2PMSG_82:0x00000000",
        # amdgpu_device.c: the resets that failed; amdgpu_kms.c: the GPU did not come up
        "amdgpu 0000:43:00.0: amdgpu: GPU mode1 reset failed",
        "amdgpu 0000:43:00.0: amdgpu: ASIC reset failed with error, -110 for drm dev, 0000:43:00.0",
        "amdgpu 0000:43:00.0: amdgpu: GPU pre asic reset failed with err, -110 for drm dev, 0000:43:00.0 ",
        "amdgpu 0000:43:00.0: amdgpu: Fatal error during GPU init",
        # gmc_v8_0.c: the older GPUs' VM fault and its status register
        "amdgpu 0000:43:00.0: amdgpu: GPU fault detected: 146 0x0c80440c for process python3 pid 4242 thread python3 "
        "pid 4242",
        "amdgpu 0000:43:00.0: amdgpu:   VM_CONTEXT1_PROTECTION_FAULT_STATUS 0x0C04400C",
    ],
)
def test_an_amdgpu_firmware_that_stops_answering_or_a_failed_reset_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, KERNEL + line + "\n") == ("amdgpu_gpu_fault", CRASH, SYS, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        # amdgpu_ras.c, amdgpu_umc.c, amdkfd/kfd_int_process_v9.c, amdgpu_ras_eeprom.c
        "amdgpu 0000:43:00.0: amdgpu: 1 uncorrectable hardware errors detected in umc block",
        "amdgpu 0000:43:00.0: amdgpu: uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!",
        "amdgpu 0000:43:00.0: amdgpu: GPU reset for gfx RAS poison consumption is issued!",
        "amdgpu: RAS poison consumption, fall back to gpu reset flow: client id 3",
        "amdgpu 0000:43:00.0: amdgpu: Uncorrectable error detected in UMC inst: 1, chan_idx: 5",
        "amdgpu 0000:43:00.0: amdgpu: RAS records:120 exceed threshold:100, GPU will not be initialized. "
        "Replace this GPU or increase the threshold",
        "amdgpu 0000:43:00.0: amdgpu: Saved bad pages 101 reaches threshold value 100",
    ],
)
def test_an_uncorrectable_amdgpu_ras_error_is_a_hardware_fault_of_the_node(tmp_path, line):
    assert answer(tmp_path, KERNEL + line + "\n") == ("amdgpu_ras_uncorrectable", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        "amdgpu 0000:43:00.0: amdgpu: 3 correctable hardware errors detected in umc block, no user action is needed.",
        "amdgpu 0000:43:00.0: amdgpu: RAS records:95 exceeds 90% of threshold:100",
        "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, but soft recovered",
        "amdgpu 0000:43:00.0: amdgpu: GPU reset(2) succeeded!",
        "amdgpu 0000:43:00.0: amdgpu: psp mode1 reset succeed ",
        "amdgpu 0000:43:00.0: amdgpu: GPU reset succeeded, trying to resume",
    ],
)
def test_corrected_ras_errors_soft_recovered_rings_and_successful_resets_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, KERNEL + line + "\n") is NONE


# ---------------------------------------------------------------------------------- HIP and the ROCm runtime 5.2.3


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # hip_runtime_api.h (hipError_t): names HIP alone uses, or spells its own way
        ("hipErrorNoBinaryForGpu", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorInvalidContext", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorContextAlreadyInUse", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorMapFailed", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorInvalidKernelFile", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorInvalidHandle", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorNotFound", ("cuda_usage_error", CRASH, APP, STOP)),
        ("hipErrorMemoryAllocation", ("cuda_oom", CRASH, APP, STOP)),
        ("hipErrorNotInitialized", ("cuda_environment_error", CRASH, SYS, SAME)),
        ("hipErrorLaunchTimeOut", ("cuda_launch_failure", CRASH, UNKNOWN, SAME)),
        ("hipErrorAssert", ("cuda_device_assert", CRASH, APP, STOP)),
        ("hipErrorRuntimeMemory", ("cuda_library_internal_error", CRASH, UNKNOWN, SAME)),
        ("hipErrorRuntimeOther", ("cuda_library_internal_error", CRASH, UNKNOWN, SAME)),
    ],
)
def test_a_hip_error_name_is_read_like_its_cuda_counterpart(tmp_path, name, expected):
    # HIP 5.2's hipGetErrorString returns the enum name (libamdhip64.so.5, strings), as a C++ check macro prints it
    assert answer(tmp_path, f"HIP error: {name} at train.cpp:42\n") == expected


def test_an_hsa_queue_error_after_the_queue_is_inactivated_is_a_gpu_fault_retried_in_place(tmp_path):
    # libhsa-runtime64-1 5.2.3: "Queue at %p inactivated due to async error:\n\t%s" with hsa_status_string's text
    log = (
        "Queue at 0x7f0a2c000000 inactivated due to async error:\n"
        "\tHSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
        "address.\n"
    )
    assert answer(tmp_path, log) == ("hip_memory_access_fault", CRASH, UNKNOWN, SAME)
    exception = "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.\n"
    assert answer(tmp_path, exception) == ("hip_memory_access_fault", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: HIP error: hipErrorNotReady",
        "hipErrorPeerAccessAlreadyEnabled",
        "hipErrorProfilerDisabled",
        # rocm_smi.py 5.2.3: a query the tool could not do
        "GPU[0]\t\t: Unable to reset XGMI error count",
    ],
)
def test_hip_statuses_that_are_not_errors_and_rocm_smi_query_errors_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ------------------------------------------------------------------------- XLA: JAX 0.10.2 and TensorFlow 2.21.0

GLOG = "E1201 05:00:01.123456 1234 coordination_service_agent.cc:332] "


@pytest.mark.parametrize(
    "line",
    [
        "F1201 05:00:01.123456 1234 client.h:77] Terminating process because the JAX distributed service detected "
        "fatal errors. This most likely indicates that another task died; see the other task logs for more details.",
        GLOG + "Polled an error from coordination service (this can be an error from this or another task).",
        "E1201 05:00:01.123456 1234 coordination_service.cc:512] /job:jax_worker/replica:0/task:3 (incarnation: 8723) "
        "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.",
        "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: The following tasks are unhealthy (stopped sending "
        "heartbeats):",
        "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Failed to send RPC to coordination service. Either the "
        "leader task was preempted/died/restarted unexpectedly or this task is experiencing network issues.",
        "jax.errors.JaxRuntimeError: ABORTED: Leader incarnation ID mismatch: the coordination  leader (usually slice "
        "0 task 0) has restarted.",
        "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Socket closed",
    ],
)
def test_xlas_coordination_service_losing_another_task_is_a_victim_retried_in_place(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("xla_coordination_task_failed", CRASH, UNKNOWN, SAME)


def test_the_error_of_the_task_that_died_first_decides_over_the_coordination_services_report(tmp_path):
    log = (
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.\n"
        + GLOG
        + "Polled an error from coordination service (this can be an error from this or another task).\n"
    )
    assert answer(tmp_path, log) == ("cuda_oom", CRASH, APP, STOP)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # the coordination service's barriers (jax.distributed's connect barrier) and an agent that never registered
        (
            "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect. "
            "This usually happens because a task triggered the barrier too early or too slowly.",
            ("rendezvous_timeout", CRASH, INFRA, SAME),
        ),
        (
            "jax.errors.JaxRuntimeError: INTERNAL: Coordination agent failed to initialize: DEADLINE_EXCEEDED",
            ("rendezvous_timeout", CRASH, INFRA, SAME),
        ),
        # TensorFlow's collective executor (libtensorflow_framework.so.2) and errors_impl.DataLossError
        (
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out during execution.",
            ("tf_collective_timeout", HANG, UNKNOWN, SAME),
        ),
        (
            "tensorflow.python.framework.errors_impl.DataLossError: Checksum does not match: stored 1234 vs. "
            "calculated on the restored bytes 5678",
            ("checkpoint_corrupt", CRASH, APP, STOP),
        ),
    ],
)
def test_xla_barrier_timeouts_and_tensorflow_collectives_are_read_by_their_cause(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


def test_a_failed_check_is_an_abort_whose_earlier_error_decides(tmp_path):
    banner = (
        "F1201 05:00:01.123456 1234 hlo_instruction.cc:123] Check failed: shape.IsArray()\n"
        "*** Check failure stack trace: ***\n"
    )
    assert answer(tmp_path, banner) == ("process_aborted", CRASH, UNKNOWN, SAME)
    earlier = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert diagnose_text(tmp_path, earlier + banner).signature == "cuda_illegal_address"


@pytest.mark.parametrize(
    "line",
    [
        "W1201 05:00:01.123456 1234 coordination_service_agent.cc:600] Coordination service agent failed to register "
        "with the leader (attempt #2, will try again after 5s, deadline is 2026-12-01, now is 2026-12-01,total "
        "timeout is 300s). Error status: UNAVAILABLE: failed to connect",
        "I1201 05:00:01.123456 1234 coordination_service_agent.cc:100] Polling for error from coordination service. "
        "This is a long-running RPC that will return only if an error is encountered or cancelled (e.g. due to "
        "shutdown).",
        "I1201 05:00:01.123456 1234 coordination_service_agent.cc:100] Cancelled call to retrieve preemption notice. "
        "This is expected upon program shutdown.",
        "I1201 05:00:01.123456 1234 coordination_service.cc:100] Coordination service is shutting down. Cancelling "
        "PollForErrorAsync()",
        "2026-12-01 05:00:01.123456: W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran "
        "out of memory trying to allocate 2.00GiB with freed_by_count=0. The caller indicates that this is not a "
        "failure, but this may mean that there could be performance gains if more memory were available.",
    ],
)
def test_xlas_retries_long_polls_shutdown_notes_and_allocator_hints_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


def test_xlas_preemption_notice_leaves_the_cause_to_whoever_sent_the_sigterm(tmp_path):
    # jaxlib's SigtermNotifier reports any SIGTERM as a "preemption notice": a scancel by a person stays a stop
    notice = (
        "I1201 05:00:01.123456 1234 preemption_notifier.cc:100] Received preemption notice with death_time "
        "2026-12-01T05:00:30Z\n"
    )
    assert kind_of(tmp_path, notice) is NONE
    cancelled = "slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT 2026-12-01T05:00:01 ***\n"
    assert diagnose_text(tmp_path, cancelled + notice).signature == "slurm_cancelled"


# ------------------------------------------------------------- object stores: botocore, google-api-core, gcsfs


@pytest.mark.parametrize(
    "line",
    [
        # botocore ClientError with a code its retry handlers treat as transient or throttling
        "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation (reached "
        "max retries: 4): Please reduce your request rate.",
        "botocore.exceptions.ClientError: An error occurred (RequestTimeout) when calling the UploadPart operation "
        "(reached max retries: 4): Your socket connection to the server was not read from or written to within the "
        "timeout period.",
        "botocore.exceptions.ClientError: An error occurred (503) when calling the HeadObject operation: Service "
        "Unavailable",
        # s3fs translates the ClientError into an OSError with the same text
        "OSError: [Errno 5] An error occurred (InternalError) when calling the PutObject operation (reached max "
        "retries: 4): We encountered an internal error. Please try again.",
        'botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL: "https://s3.amazonaws.com/b"',
        "botocore.exceptions.ResponseStreamingError: An error occurred while reading from response stream: "
        "('Connection broken: IncompleteRead(0 bytes read, 1024 more expected)')",
        "google.api_core.exceptions.TooManyRequests: 429 POST https://storage.googleapis.com/upload/storage/v1/b/b/o: "
        "The rate of change requests to the object b/ckpt exceeds the rate limit.",
        "google.api_core.exceptions.RetryError: Timeout of 120.0s exceeded, last exception: 503 Backend Error",
        "gcsfs.retry.HttpError: We encountered an internal error. Please try again., 503",
        "google.resumable_media.common.InvalidResponse: (<Response [503]>, 'Request failed with status code', 503, "
        "'Expected one of', <HTTPStatus.OK: 200>)",
    ],
)
def test_an_object_store_that_stays_unavailable_through_the_clients_retries_is_infrastructure(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("object_store_unavailable", CRASH, INFRA, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "botocore.exceptions.ClientError: An error occurred (ExpiredToken) when calling the PutObject operation: The "
        "provided token has expired.",
        "botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the PutObject operation: Access "
        "Denied",
        "botocore.exceptions.ClientError: An error occurred (NoSuchKey) when calling the GetObject operation: The "
        "specified key does not exist.",
        "botocore.exceptions.ClientError: An error occurred (403) when calling the HeadObject operation: Forbidden",
        "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
        "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/v1/b/b/o/ckpt: "
        "sa@p.iam.gserviceaccount.com does not have storage.objects.get access to the Google Cloud Storage object.",
        "google.api_core.exceptions.NotFound: 404 GET https://storage.googleapis.com/storage/v1/b/b/o/ckpt: No such "
        "object: b/ckpt",
    ],
)
def test_an_object_store_that_refuses_the_jobs_credentials_or_path_stops_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("object_store_request_refused", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "WARNING:urllib3.connectionpool:Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='storage.googleapis.com', port=443): "
        "Read timed out. (read timeout=60)\")': /upload/storage/v1/b/bucket/o",
        "DEBUG:google.api_core.retry:Retrying due to 503 Service Unavailable, sleeping 1.3s ...",
        "2026-12-01 05:00:01,123 botocore.retryhandler [DEBUG] Retry needed, retrying request after delay of: 0.4",
    ],
)
def test_a_request_the_client_retries_by_itself_is_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ------------------------------------------------------------------------------- Linux 6.1: btrfs and the SMB client


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # fs/btrfs/super.c and tree-checker.c
        (
            "BTRFS: error (device nvme0n1p2) in btrfs_commit_transaction:2418: errno=-5 IO failure (Error while "
            "writing out transaction)",
            ("local_fs_error", CRASH, HW, EXCLUDE),
        ),
        ("BTRFS info (device nvme0n1p2: state EA): forced readonly", ("local_fs_error", CRASH, HW, EXCLUDE)),
        (
            "BTRFS critical (device nvme0n1p2): corrupt leaf: root=5 block=123 slot=4, invalid key objectid",
            ("local_fs_error", CRASH, HW, EXCLUDE),
        ),
        # fs/smb/client/connect.c: the server's echo went unanswered
        (
            "CIFS: VFS: \\\\storage01 has not responded in 180 seconds. Reconnecting...",
            ("nfs_not_responding", HANG, INFRA, SAME),
        ),
    ],
)
def test_btrfs_aborts_and_an_smb_server_that_stops_answering_are_read_by_their_cause(tmp_path, line, expected):
    assert answer(tmp_path, KERNEL + line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        "BTRFS error (device nvme0n1p2): bdev /dev/nvme0n1p2 errs: wr 1, rd 0, flush 0, corrupt 0, gen 0",
        "BTRFS warning (device nvme0n1p2): csum failed root 5 ino 257 off 0 csum 0x8941f998 expected csum "
        "0x12345678 mirror 1",
        "BTRFS info (device nvme0n1p2): scrub: finished on devid 1 with status: 0",
        "CIFS: VFS: \\\\storage01 Send error in read = -11",
        "CIFS: VFS: \\\\storage01 cifs_reconnect: Reconnect successful",
    ],
)
def test_a_single_btrfs_device_error_checksum_repairs_and_smb_reconnects_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, KERNEL + line + "\n") is NONE


NINTH_PASS_SIGNATURES = [
    "amdgpu_gpu_fault",
    "amdgpu_ras_uncorrectable",
    "hip_memory_access_fault",
    "xla_coordination_task_failed",
    "tf_collective_timeout",
    "object_store_unavailable",
    "object_store_request_refused",
    "http_client_retry_notice",
    "local_fs_error",
    "nfs_not_responding",
    "tpu_chip_halted",
    "tpu_ici_link_down",
    "tpu_device_in_use",
]


@pytest.mark.parametrize("signature_id", NINTH_PASS_SIGNATURES)
def test_the_ninth_pass_keywords_start_where_the_prefilter_already_stops(signature_id):
    """A keyword starting with a lower-case letter makes the prefilter stop at many positions of healthy lines
    (docs/adding-a-signature.md); these start with a capital or a punctuation mark, or are older ones that did."""
    keywords = default_catalogue().get(signature_id).keywords
    older = {"fs: server", "lockd: server"}
    assert all(k[0].isupper() or not k[0].isalnum() or k in older for k in keywords), keywords


# --------------------------------------------------------------------------------------------- libtpu 0.0.42.1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Core halted unexpectedly: core 0 halted unexpectedly at "
            "tag:pc 0x1:0x2a3",
            ("tpu_chip_halted", CRASH, UNKNOWN, SAME),
        ),
        (
            "jax.errors.JaxRuntimeError: INTERNAL: A program or fatal TPU error occurred.",
            ("tpu_chip_halted", CRASH, UNKNOWN, SAME),
        ),
        (
            "E1201 05:00:01.123456 1234 tpu.cc:100] Data link layer on the following ICI link(s) has unexpectedly gone "
            "down: chip 2 port 1. ",
            ("tpu_ici_link_down", CRASH, HW, EXCLUDE),
        ),
        (
            "The TPU is already in use by process with pid 4242. Not attempting to load libtpu.so in this process.",
            ("tpu_device_in_use", CRASH, APP, STOP),
        ),
    ],
)
def test_a_halted_tpu_core_a_downed_ici_link_and_a_tpu_held_by_another_process_are_read_by_their_cause(
    tmp_path, line, expected
):
    assert answer(tmp_path, line + "\n") == expected
