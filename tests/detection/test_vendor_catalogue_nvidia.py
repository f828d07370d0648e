"""Recognition from the NVIDIA stack's own message catalogues (issue 9, eighth pass).

The lines are built from what the software prints, not from corpus excerpts: the CUDA runtime's ``cudaError``
enum and the driver API's ``CUresult`` enum with their doc comments (``driver_types.h`` and ``cuda.h`` of PyPI
``nvidia-cuda-runtime-cu12`` 12.9.79) and the texts ``cudaGetErrorString`` returns for them
(``libcudart.so.12``); the status enums of cuBLAS 12.9.3.13, cuSOLVER 11.7.5.82, cuFFT 11.4.1.4, cuRAND
10.3.10.19 and cuDNN 9.28.0.42 (their wheels' headers); NVML's return codes and strings (``pynvml.py`` of
``nvidia-ml-py`` 13.615.71); and the ``NCCL WARN`` format strings of ``libnccl.so.2`` 2.32.3
(``nvidia-nccl-cu12``, ``strings``), each under NCCL's ``host:pid:tid [dev] file:line NCCL WARN`` header. Each
family has lines that must be found and at least one line of the same software that must stay no failure. Each
case is one log given to ``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
APP, SYS, HW = Category.APPLICATION, Category.SYSTEM_SOFTWARE, Category.HARDWARE
NCCL = "gpu-a7:812:1044 [3] "
NO_FAILURE = (None, NONE, Category.UNKNOWN, None)

# driver_types.h documents each of these as the caller's own request (an argument out of range, a launch asking
# for more than the device has, no code for this GPU, a stream capture misused): a user error, not sticky
USAGE_ERRORS = [
    ("cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument"),
    ("cudaErrorInvalidConfiguration", None, "invalid configuration argument"),
    ("cudaErrorInvalidDeviceFunction", None, "invalid device function"),
    ("cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
    (
        "cudaErrorNoKernelImageForDevice",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "no kernel image is available for execution on the device",
    ),
    ("cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"),
    ("cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"),
    ("cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"),
    (
        "cudaErrorUnsupportedPtxVersion",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "the provided PTX was compiled with an unsupported toolchain.",
    ),
    ("cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found"),
    (
        "cudaErrorStreamCaptureUnsupported",
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
        "operation not permitted when stream is capturing",
    ),
    (
        "cudaErrorStreamCaptureInvalidated",
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
        "operation failed due to a previous error during capture",
    ),
    (
        "cudaErrorCooperativeLaunchTooLarge",
        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
        "too many blocks in cooperative launch",
    ),
    ("cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"),
    (
        "cudaErrorInvalidClusterSize",
        "CUDA_ERROR_INVALID_CLUSTER_SIZE",
        "a kernel launch error has occurred due to cluster misconfiguration",
    ),
    ("cudaErrorTooManyPeers", "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"),
]

# driver_types.h: the driver, the runtime, the OS or the MPS daemon failed beneath the job
ENVIRONMENT_ERRORS = [
    ("cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", "initialization error"),
    ("cudaErrorStartupFailure", None, "startup failure in cuda runtime"),
    ("cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"),
    (
        "cudaErrorPeerAccessUnsupported",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "peer access is not supported between these two devices",
    ),
    (
        "cudaErrorMpsConnectionFailed",
        "CUDA_ERROR_MPS_CONNECTION_FAILED",
        "MPS client failed to connect to the MPS control daemon or the MPS server",
    ),
    (
        "cudaErrorMpsClientTerminated",
        "CUDA_ERROR_MPS_CLIENT_TERMINATED",
        "the MPS client has been terminated by the server",
    ),
]


def _forms(runtime: str, driver: str | None, text: str) -> list[str]:
    """How programs print one CUDA error: PyTorch's message, the enum name after a failed call, CuPy's and
    JAX's forms with the driver API's name."""
    forms = [
        f"RuntimeError: CUDA error: {text}",
        f"kernels.cu:42 CUDA call cudaMemcpyAsync(dst, src, n, kind, stream) failed with {runtime} ({text})",
        f"cupy_backends.cuda.api.runtime.CUDARuntimeError: {runtime}: {text}",
    ]
    if driver:
        forms.append(f"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to launch kernel: {driver}: {text}")
    return forms


@pytest.mark.parametrize("line", [f for row in USAGE_ERRORS for f in _forms(*row)])
def test_a_cuda_error_documented_as_the_callers_own_request_is_an_application_failure_that_stops(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("cuda_usage_error", CRASH, APP, STOP)


@pytest.mark.parametrize("line", [f for row in ENVIRONMENT_ERRORS for f in _forms(*row)])
def test_a_cuda_error_of_the_driver_runtime_os_or_mps_daemon_is_system_software_retried(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("cuda_environment_error", CRASH, SYS, SAME)


@pytest.mark.parametrize(
    "line",
    [
        # cudaErrorNotReady: "This result is not actually an error"
        "cudaStreamQuery(stream) returned cudaErrorNotReady",
        "RuntimeError: CUDA error: device not ready",
        # cudaErrorCudartUnloading: a call made while the process shuts down, after the driver was unloaded
        "RuntimeError: CUDA error: driver shutting down",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_DEINITIALIZED: driver shutting down",
        # a repeated enable or registration, reported and ignored
        "cudaDeviceEnablePeerAccess(1, 0) returned cudaErrorPeerAccessAlreadyEnabled",
        "CUDA error: part or all of the requested memory range is already mapped",
        "cudaProfilerStart: cudaErrorProfilerAlreadyStarted",
    ],
)
def test_a_cuda_status_the_header_documents_as_no_failure_stays_no_failure(tmp_path, line):
    assert answer(tmp_path, "step 10 loss 2.1\n" + line + "\n") == NO_FAILURE


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        # sticky: "This leaves the process in an inconsistent state ... the process must be terminated and relaunched"
        ("RuntimeError: CUDA error: tensor memory not completely freed", "cuda_illegal_address"),
        ("failed with cudaErrorTensorMemoryLeak (721)", "cuda_illegal_address"),
        ("RuntimeError: CUDA error: hardware stack error", "cuda_illegal_address"),
        ("RuntimeError: CUDA error: invalid program counter", "cuda_illegal_address"),
        ("RuntimeError: CUDA error: operation not supported on global/shared address space", "cuda_illegal_address"),
        ("XlaRuntimeError: INTERNAL: CUDA_ERROR_ASSERT: device-side assert triggered", "cuda_device_assert"),
        ("failed with cudaErrorExternalDevice (911)", "cuda_launch_failure"),
        ("cudaDeviceSynchronize returned cudaErrorPriorLaunchFailure", "cuda_launch_failure"),
        ("CUDA_ERROR_UNKNOWN: unknown error", "cuda_launch_failure"),
    ],
)
def test_a_sticky_cuda_error_joins_the_family_of_its_kernel_fault(tmp_path, line, signature):
    assert answer(tmp_path, line + "\n")[0] == signature


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
            ("gpu_lost", CRASH, HW, EXCLUDE),
        ),
        (
            "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
            ("cuda_devices_unavailable", CRASH, APP, STOP),
        ),
        ("cudaSetDevice(0) failed with cudaErrorDeviceAlreadyInUse", ("cuda_devices_unavailable", CRASH, APP, STOP)),
        ("RuntimeError: CUDA error: CUDA driver is a stub library", ("gpu_driver_unusable", CRASH, SYS, STOP)),
        ("cudaGetDeviceCount returned cudaErrorCallRequiresNewerDriver", ("gpu_driver_unusable", CRASH, SYS, STOP)),
        (
            "CUDA_ERROR_JIT_COMPILER_NOT_FOUND: PTX JIT compiler library not found",
            ("gpu_driver_unusable", CRASH, SYS, STOP),
        ),
        ("XlaRuntimeError: INTERNAL: CUDA_ERROR_OUT_OF_MEMORY: out of memory", ("cuda_oom", CRASH, APP, STOP)),
    ],
)
def test_a_cuda_enum_name_reads_like_the_message_text_already_known(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx(handle, opa, opb)`",
            ("cuda_usage_error", CRASH, APP, STOP),
        ),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmul(handle)`",
            ("cuda_usage_error", CRASH, APP, STOP),
        ),
        (
            "cusolver error: CUSOLVER_STATUS_INVALID_VALUE, when calling `cusolverDnSgetrf`",
            ("cuda_usage_error", CRASH, APP, STOP),
        ),
        ("RuntimeError: cuFFT error: CUFFT_INVALID_SIZE", ("cuda_usage_error", CRASH, APP, STOP)),
        ("curand error: CURAND_STATUS_LENGTH_NOT_MULTIPLE", ("cuda_usage_error", CRASH, APP, STOP)),
        ("cusolver error: CUSOLVER_STATUS_ALLOC_FAILED", ("cuda_oom", CRASH, APP, STOP)),
        ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", ("cuda_oom", CRASH, APP, STOP)),
        ("RuntimeError: cuFFT error: CUFFT_EXEC_FAILED", ("cuda_launch_failure", CRASH, Category.UNKNOWN, SAME)),
        ("curand error: CURAND_STATUS_LAUNCH_FAILURE", ("cuda_launch_failure", CRASH, Category.UNKNOWN, SAME)),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            ("cuda_library_internal_error", CRASH, Category.UNKNOWN, SAME),
        ),
        (
            "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
            ("cuda_library_internal_error", CRASH, Category.UNKNOWN, SAME),
        ),
        (
            "curand error: CURAND_STATUS_PREEXISTING_FAILURE",
            ("cuda_library_internal_error", CRASH, Category.UNKNOWN, SAME),
        ),
    ],
)
def test_a_math_library_status_reads_as_a_request_an_allocation_a_kernel_or_an_unknown_fault(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", ("cuda_usage_error", CRASH, APP, STOP)),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
            ("cuda_usage_error", CRASH, APP, STOP),
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER",
            ("cuda_environment_error", CRASH, SYS, SAME),
        ),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH", ("cuda_environment_error", CRASH, SYS, SAME)),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
            ("cuda_oom", CRASH, APP, STOP),
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
            ("cuda_library_internal_error", CRASH, Category.UNKNOWN, SAME),
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
            ("cuda_library_internal_error", CRASH, Category.UNKNOWN, SAME),
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED_CUDART",
            ("cuda_launch_failure", CRASH, Category.UNKNOWN, SAME),
        ),
    ],
)
def test_a_cudnn_status_reads_by_its_category_of_thousands(tmp_path, line, expected):
    """cuDNN 9 groups its statuses by the thousand (cudnn_graph.h): 2xxx bad parameter, 3xxx not supported (less
    the installation's own mismatches), 4xxx internal, 5xxx execution failed."""
    assert answer(tmp_path, line + "\n") == expected


def test_a_math_library_success_status_is_no_failure(tmp_path):
    log = (
        "cublasSetMathMode returned CUBLAS_STATUS_SUCCESS\ncufftPlan1d: CUFFT_SUCCESS\n"
        "cudnnCreate: CUDNN_STATUS_SUCCESS\nstep 20 loss 1.9\n"
    )
    assert answer(tmp_path, log) == NO_FAILURE


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pynvml.NVMLError_ResetRequired: GPU requires restart", ("nvml_gpu_fault", CRASH, HW, EXCLUDE)),
        ("pynvml.NVMLError_IrqIssue: Interrupt Request Issue", ("nvml_gpu_fault", CRASH, HW, EXCLUDE)),
        ("pynvml.NVMLError_InsufficientPower: Insufficient External Power", ("nvml_gpu_fault", CRASH, HW, EXCLUDE)),
        (
            NCCL + "misc/nvmlwrap.cc:100 NCCL WARN nvmlDeviceGetHandleByIndex(3) failed: GPU requires restart",
            ("nvml_gpu_fault", CRASH, HW, EXCLUDE),
        ),
        ("pynvml.NVMLError_GpuIsLost: GPU is lost", ("gpu_lost", CRASH, HW, EXCLUDE)),
        ("pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded", ("gpu_driver_unusable", CRASH, SYS, STOP)),
        ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", ("gpu_driver_unusable", CRASH, SYS, STOP)),
        (
            "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
            ("gpu_driver_mismatch", CRASH, SYS, EXCLUDE),
        ),
    ],
)
def test_an_nvml_code_for_an_unusable_gpu_or_driver_is_a_failure(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        "pynvml.NVMLError_NotSupported: Not Supported",
        "pynvml.NVMLError_NoPermission: Insufficient Permissions",
        NCCL + "misc/nvmlwrap.cc:100 NCCL WARN nvmlDeviceGetNvLinkState() failed: Not Supported",
    ],
)
def test_an_nvml_code_that_answers_one_query_is_no_failure(tmp_path, line):
    assert answer(tmp_path, "step 10 loss 2.1\n" + line + "\n") == NO_FAILURE


@pytest.mark.parametrize(
    "line",
    [
        "transport/net_ib.cc:88 NCCL WARN NET/IB: The error is fatal (device failure). Cannot continue.",
        "transport/net_ib.cc:90 NCCL WARN NET/IB: Fatal error. Detected 2 failed devices out of 4 devices on the send communicator (comm=0x7f00).",
        "transport/net_ib.cc:91 NCCL WARN NET/IB: recv: Recovery for device 1 failed due to max attempts reached (recv comm=0x7f00)",
        "transport/net_ib.cc:91 NCCL WARN NET/IB: send: Port recovery failed for send comm=0x7f00 devIndex=1",
    ],
)
def test_an_infiniband_device_nccl_could_not_recover_is_a_network_failure(tmp_path, line):
    assert answer(tmp_path, NCCL + line + "\n") == ("nccl_ib_device_failed", CRASH, Category.INFRASTRUCTURE, SAME)


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "transport/net_ib.cc:420 NCCL WARN NET/IB : mlx5_2:1 async fatal event: local catastrophic error",
            "ib_nic_catastrophic",
        ),
        (
            "transport/net_ib.cc:420 NCCL WARN NET/IB : mlx5_2:1 async fatal event on CQ (0x55d0) handle=3 cqe=512: CQ error",
            "ib_qp_fatal",
        ),
        ("NET/IB : bnxt_re0:1 async fatal event on QP: invalid request local work queue error", "ib_qp_fatal"),
        (
            "transport/net_ib.cc:900 NCCL WARN ibv_post_send() failed with error Invalid argument, Bad WR 0x7f, First WR 0x7f",
            "ib_verbs_call_failed",
        ),
    ],
)
def test_an_infiniband_async_fatal_event_or_failed_post_in_nccls_format_is_found(tmp_path, line, signature):
    assert answer(tmp_path, NCCL + line + "\n")[0] == signature


@pytest.mark.parametrize(
    "line",
    [
        "transport/net_ib.cc:88 NCCL WARN NET/IB: send: The error is not fatal. Trying to continue...",
        "transport/net_ib.cc:700 NCCL WARN NET/IB: send: Ignoring flush error on a QP (comm=0x7f, wc.wr_id=7, "
        "wc.status=IBV_WC_WR_FLUSH_ERR(5)).",
        "transport/net_ib.cc:700 NCCL WARN NET/IB: Encountered a stale CQE with error for slot=3. Slot was already "
        "handled (comm=0x7f, wc.wr_id=7, wc.status=IBV_WC_WR_FLUSH_ERR(5), wc.opcode=IBV_WC_SEND(0)).",
        "transport/net_ib.cc:700 NCCL WARN NET/IB: send: Work completion error on recovery CQ 0x7f for device 1: "
        "status=IBV_WC_RETRY_EXC_ERR(12)",
        "transport/net_ib.cc:91 NCCL WARN NET/IB: send: Alive message sequence timeout for device 1 (send comm=0x7f00, "
        "failedAttempts=3)",
        "misc/ibvwrap.cc:300 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, retrying 3/7 after 100 msec of sleep",
        "transport/nvls.cc:100 NCCL WARN NVLS Multicast bind of size 2097152 at MC group 55a offset 0 dev 3 failed transiently: CUDA error 2 'out of memory'.",
        "init.cc:640 NCCL WARN Detected mixed local Net device counts across ranks (min 4, max 8). Ignoring due to NCCL_IGNORE_NET_MISMATCH.",
        "graph/search.cc:1100 NCCL WARN Could not find a path for pattern 4, falling back to simple order",
    ],
)
def test_an_nccl_warning_that_nccl_recovers_from_by_itself_is_no_failure(tmp_path, line):
    assert answer(tmp_path, "step 10 loss 2.1\n" + NCCL + line + "\n") == NO_FAILURE


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "misc/socket.cc:540 NCCL WARN Message truncated : received 1024 bytes instead of 256",
            "nccl_message_truncated",
        ),
        (
            "transport/net_socket.cc:540 NCCL WARN NET/Socket : peer 10.0.0.9<52110> message truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes",
            "nccl_message_truncated",
        ),
        (
            "init.cc:640 NCCL WARN Mismatched NCCL version detected : rank 0 version 22105 rank 7 version 21903",
            "nccl_version_mismatch",
        ),
        (
            "init.cc:100 NCCL WARN NCCL version mismatch with remote peer gpu-b2 (local: 2.21.5, remote 2.19.3)",
            "nccl_version_mismatch",
        ),
        (
            "bootstrap.cc:300 NCCL WARN Bootstrap Root : mismatch in info from procs, nranks 16 vs 8, nroots 1 vs 1, iroot 0 vs 0, offset 0 vs 0",
            "nccl_version_mismatch",
        ),
        (
            "init.cc:640 NCCL WARN Detected mixed local Net device counts across ranks (min 4, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to continue.",
            "nccl_version_mismatch",
        ),
        ("init.cc:100 NCCL WARN Invalid rank requested : 9/8", "nccl_invalid_usage"),
        ("init.cc:100 NCCL WARN Invalid device 9 (totalnDev=8)", "nccl_invalid_usage"),
        (
            "collectives.cc:100 NCCL WARN AllReduce : invalid root 9 (root should be in the 0..7 range)",
            "nccl_invalid_usage",
        ),
        ("init.cc:2000 NCCL WARN Fatal: host threads racing to launch NCCL on same device.", "nccl_invalid_usage"),
    ],
)
def test_an_nccl_refusal_of_a_mismatched_or_invalid_setup_is_an_application_failure_that_stops(
    tmp_path, line, signature
):
    assert answer(tmp_path, NCCL + line + "\n") == (signature, CRASH, APP, STOP)


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("enqueue.cc:100 NCCL WARN Comm 0x55d0c1 is in abort state", "nccl_teardown"),
        (
            "transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclProxy)",
            "nccl_teardown",
        ),
        (
            "bootstrap.cc:300 NCCL WARN bootstrapSend: an earlier asynchronous send to peer 3 failed",
            "nccl_socket_error",
        ),
        (
            "misc/socket.cc:480 NCCL WARN socketStartConnect: connect to 10.0.0.3<40231> returned Connection timed out, exceeded error retry count after 35 attempts",
            "nccl_socket_error",
        ),
    ],
)
def test_an_nccl_report_of_a_failure_elsewhere_is_a_victim_that_blames_no_one(tmp_path, line, signature):
    assert answer(tmp_path, NCCL + line + "\n") == (signature, CRASH, Category.UNKNOWN, SAME)


def test_an_nvls_multicast_memory_that_cannot_bind_is_the_nodes_fabric_setup(tmp_path):
    line = (
        "transport/nvls.cc:100 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1073741824 at "
        "MC group 55a offset 0 : CUDA error 801 'operation not supported'."
    )
    assert answer(tmp_path, NCCL + line + "\n") == ("gpu_fabric_not_initialized", CRASH, SYS, EXCLUDE)


VENDOR_SIGNATURES = [
    "cuda_status_not_an_error",
    "nccl_ib_recovery_notice",
    "cuda_usage_error",
    "cuda_environment_error",
    "cuda_library_internal_error",
    "nvml_gpu_fault",
    "nccl_ib_device_failed",
    "nccl_message_truncated",
    "nccl_version_mismatch",
]


@pytest.mark.parametrize("signature_id", VENDOR_SIGNATURES)
def test_the_vendor_catalogue_keywords_start_with_a_capital_so_the_prefilter_stops_nowhere_new(signature_id):
    """A keyword starting with a common lower-case letter makes the prefilter stop at many positions of healthy
    lines (docs/adding-a-signature.md); the vendors' enum names and message prefixes all start with a capital."""
    keywords = default_catalogue().get(signature_id).keywords
    assert all(k[0].isupper() for k in keywords), keywords


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
            ("nccl_unhandled_cuda_error", CRASH, SYS, SAME),
        ),
        (
            "unhandled system error (run with NCCL_DEBUG=INFO for details)",
            ("nccl_system_error", CRASH, Category.UNKNOWN, SAME),
        ),
        ("internal error - please report this issue to the NCCL developers", ("nccl_internal_error", CRASH, SYS, SAME)),
        ("invalid argument (run with NCCL_DEBUG=WARN for details)", ("nccl_invalid_usage", CRASH, APP, STOP)),
        ("invalid usage (run with NCCL_DEBUG=WARN for details)", ("nccl_invalid_usage", CRASH, APP, STOP)),
        ("remote process exited or there was a network error", ("nccl_remote_error", CRASH, Category.UNKNOWN, SAME)),
    ],
)
def test_each_text_ncclgeterrorstring_returns_reads_as_its_result_code(tmp_path, text, expected):
    line = (
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        f"ProcessGroupNCCL.cpp:1970, {text}, NCCL version 2.21.5"
    )
    assert answer(tmp_path, line + "\n") == expected
