"""Recognition by stable tokens, seventh pass of issue 9 (failures answered "none" on the device, driver, host
and network side): AMD's amdgpu driver and ROCm runtime, a machine check's status register, an InfiniBand port
without link, the AWS Neuron and Huawei HCCL runtimes' own codes, NCCL results as JAX/XLA prints them, libfabric
completion errors, RDMA queue pairs and registrations that run out of memory, NCCL's P2P-over-NVLink report and
DeepEP's timeouts. Each case is one log given to
``diagnose_files``, the function behind ``lazarus diagnose``; the lines are written for the test."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text

CRASH, HANG, NONE = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES


@pytest.mark.parametrize(
    "log",
    [
        "[ 8812.120031] amdgpu 0000:c1:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:3 pasid:32771)\n"
        "[ 8812.120044] amdgpu 0000:c1:00.0: amdgpu:   in page starting at address 0x00007f3a10000000 from client 10\n",
        "amdgpu 0000:83:00.0: [mmhub0] retry page fault (src_id:0 ring:0 vmid:5 pasid:32790)\n",
        "amdgpu 0000:83:00.0: amdgpu: VM_L2_PROTECTION_FAULT_STATUS:0x00301031\n",
        "[ 501.3] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring comp_1.2.0 timeout, signaled seq=1201, emitted seq=1203\n",
        "Dec  1 02:00:01 gpu-a7 kernel: amdgpu 0000:43:00.0: amdgpu: GPU reset begin!\n",
        "[ 502.9] [drm] VRAM is lost due to GPU reset!\n",
    ],
)
def test_an_amdgpu_driver_fault_is_a_driver_failure_that_excludes_the_node(tmp_path, log):
    assert answer(tmp_path, log) == ("amdgpu_gpu_fault", CRASH, Category.SYSTEM_SOFTWARE, EXCLUDE)


def test_an_amdgpu_fault_names_the_syslog_host(tmp_path):
    log = "Dec  1 02:00:01 gpu-a7 kernel: amdgpu 0000:43:00.0: [gfxhub] page fault (src_id:0 ring:8 vmid:2 pasid:9)\n"
    assert diagnose_text(tmp_path, log).implicated_nodes == ["gpu-a7"]


def test_a_rocm_memory_access_fault_is_a_crash_of_unknown_cause_retried_in_place(tmp_path):
    log = (
        "step 412 loss 2.71\n"
        "Memory access fault by GPU node-3 (Agent handle: 0x5611e0) on address 0x7fe0c0000. Reason: Unknown.\n"
    )
    result = diagnose_text(tmp_path, log)
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "hip_memory_access_fault",
        CRASH,
        Category.UNKNOWN,
        SAME,
    )
    assert result.implicated_nodes == []  # "node-3" is the HSA agent's index, not a host


@pytest.mark.parametrize(
    "log",
    [
        "EDAC skx MC2: CPU 4: Machine Check Event: 0 Bank 13: bc00000000010090\n",
        "EDAC sbridge MC0: CPU 0: Machine Check Event: 0 Bank 9: 2c000040000a0090\n",
        "mcelog[311]: STATUS ee0000000040110a MCGSTATUS 5\n",
        "kernel: [Hardware Error]: CPU:6 (19:1:1) MC17_STATUS[Over|UE|MiscV|AddrV|-|-|SyndV|UECC|-|-|-]: 0xfe2000000\n",
        "node7 mcelog[2001]: Uncorrected error\n",
    ],
)
def test_a_machine_check_whose_status_has_the_uc_bit_is_an_uncorrected_host_error(tmp_path, log):
    assert answer(tmp_path, log) == ("host_mce_uncorrected", CRASH, Category.HARDWARE, EXCLUDE)


@pytest.mark.parametrize(
    "log",
    [
        "EDAC sbridge MC1: CPU 1: Machine Check Event: 0 Bank 11: 8c00004f000800c2\n",
        "EDAC skx MC3: CPU 2: Machine Check Event: 0 Bank 7: cc00018000010091\n",
        "mcelog[311]: STATUS 9c0000000040110a MCGSTATUS 0\n",
        "kernel: [Hardware Error]: CPU:18 (10:9:1) MC4_STATUS[Over|CE|MiscV|-|AddrV|CECC]: 0xdc5c410004080a13\n",
        "mcelog[2001]: Corrected error\n",
    ],
)
def test_a_machine_check_whose_status_has_no_uc_bit_is_no_failure(tmp_path, log):
    assert diagnose_text(tmp_path, log).failure_kind is NONE


@pytest.mark.parametrize(
    "log",
    [
        "CA 'mlx5_2'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n",
        "CA 'mlx5_0'\n    Port 1:\n        State: Down\n        Physical state: Disabled\n",
        "ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE (LinkUp 200 Gb/sec).\n",
    ],
)
def test_an_infiniband_port_without_link_excludes_the_node(tmp_path, log):
    assert answer(tmp_path, log) == ("ib_port_not_active", CRASH, Category.INFRASTRUCTURE, EXCLUDE)


@pytest.mark.parametrize(
    "log",
    [
        "CA 'mlx5_1'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n",
        "ERROR:  nhc:  Health check failed:  check_gpu_bw: P2P test on GPU 1 to GPU 0 failed.\n",
    ],
)
def test_an_active_port_or_another_health_check_is_not_a_port_without_link(tmp_path, log):
    assert diagnose_text(tmp_path, log).signature != "ib_port_not_active"


def test_a_neuron_runtime_hardware_status_excludes_the_node(tmp_path):
    log = (
        "2025-Mar-02 10:00:01.000  811:812  ERROR  NRT:nrt_execute  Failure: NRT_EXEC_HW_ERR_HBM_UE in nrt_execute()\n"
    )
    assert answer(tmp_path, log) == ("neuron_runtime_hw_error", CRASH, Category.HARDWARE, EXCLUDE)


@pytest.mark.parametrize("status", ["NRT_FAILURE", "NRT_TIMEOUT", "NRT_RESOURCE", "NRT_EXEC_UNIT_UNRECOVERABLE"])
def test_a_neuron_runtime_failure_status_is_a_crash_of_unknown_cause_retried_in_place(tmp_path, status):
    log = f"2025-Mar-02 10:00:01.000  811:812  ERROR  NRT:nrt_infodump  Failure: {status} in nrt_execute()\n"
    assert answer(tmp_path, log) == ("neuron_runtime_error", CRASH, Category.UNKNOWN, SAME)


def test_a_neuron_success_status_is_no_failure(tmp_path):
    log = "2025-Mar-02 10:00:01.000  811:812  INFO  NRT:nrt_load  status NRT_SUCCESS\n"
    assert diagnose_text(tmp_path, log).failure_kind is NONE


@pytest.mark.parametrize(
    "log",
    [
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not "
        "received the Notify record from remote rank [3].\n",
        "[ERROR] HCCL(91,python3):2026-01-02-03:04:05.678.901 [task_exception_handler.cc:27] [92][TaskExecStage]"
        "[Timeout][HOST]Task run failed, base information is streamID:[7], taskID[12]\n",
    ],
)
def test_an_hccl_execution_timeout_is_a_collective_hang(tmp_path, log):
    assert answer(tmp_path, log) == ("hccl_execution_timeout", HANG, Category.UNKNOWN, SAME)


def test_an_hccl_link_establish_timeout_is_retried_in_place(tmp_path):
    log = "RuntimeError: EI0006: Getting socket times out. Reason: Remote Rank did not send the data in time.\n"
    assert answer(tmp_path, log) == ("hccl_link_establish_timeout", CRASH, Category.UNKNOWN, SAME)


def test_a_neuron_collective_bootstrap_timeout_is_a_hang(tmp_path):
    log = (
        "2024-Jan-05 01:02:03.0001 4411:4490 [3] bootstrap.cc:89 CCOM WARN Timeout waiting for incoming "
        "connection (waited 120 sec)\n"
    )
    assert answer(tmp_path, log) == ("ccom_bootstrap_timeout", HANG, Category.UNKNOWN, SAME)


@pytest.mark.parametrize(
    ("result", "signature"),
    [
        ("unhandled cuda error", "nccl_unhandled_cuda_error"),
        ("unhandled system error (run with NCCL_DEBUG=INFO for details)", "nccl_system_error"),
        ("internal error - please report this issue to the NCCL developers", "nccl_internal_error"),
        ("invalid usage (run with NCCL_DEBUG=WARN for details)", "nccl_invalid_usage"),
    ],
)
def test_an_nccl_result_as_xla_prints_it_is_that_nccl_error(tmp_path, result, signature):
    log = (
        "E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2432] Execution of replica 1 failed: INTERNAL: "
        f"external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) "
        f"failed: {result}\n"
    )
    assert diagnose_text(tmp_path, log).signature == signature


def test_an_xid_the_driver_prints_without_its_device_is_read_as_that_xid(tmp_path):
    log = "NVRM: Xid 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)\n"
    assert diagnose_text(tmp_path, log).signature == "xid_13_graphics_exception"


@pytest.mark.parametrize(
    "log",
    [
        "libfabric:7001:1700000000::efa:cq:efa_rdm_pke_handle_error():412<warn> err: 113, message: No route to host\n",
        "Unable to write to EQ: Missing or unavailable event queue. err: Input/output error (5) prov_errno: "
        "Unknown error -12 (-12) prov/efa/src/rxr/rxr.h:1343\n",
    ],
)
def test_a_libfabric_completion_queue_error_is_a_crash_retried_in_place(tmp_path, log):
    assert answer(tmp_path, log) == ("libfabric_cq_error", CRASH, Category.UNKNOWN, SAME)


@pytest.mark.parametrize(
    "log",
    [
        "gpu3:5120:5190 [1] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory",
        "[1700000000.1] [n1:77:0] ib_iface.c:988  UCX  ERROR iface=0x1: failed to create RC QP TX wr:256: Cannot allocate memory",
        "libfabric:901:1700000000:verbs:ep_ctrl:vrb_ep_enable():884<warn> rdma_create_qp: Cannot allocate memory (12)",
        "mlx5_core 0000:17:00.0: mlx5_cmd_check:794:(pid 0): CREATE_MKEY(0x200) op_mod(0x0) failed, status limits "
        "exceeded(0x8), syndrome (0x59c8a4)",
    ],
)
def test_running_out_of_memory_for_a_queue_pair_or_a_registration_stops(tmp_path, log):
    assert answer(tmp_path, log + "\n") == ("rdma_resource_enomem", CRASH, Category.SYSTEM_SOFTWARE, STOP)


def test_a_completion_queue_that_ucx_cannot_create_while_probing_a_device_is_no_failure(tmp_path):
    log = (
        "[1700000000.4] [n1:1188:0]  ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory. "
        "Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)\n"
    )
    assert diagnose_text(tmp_path, log).failure_kind is NONE


def test_nccl_finding_p2p_disabled_between_nvlink_gpus_is_a_hardware_fault(tmp_path):
    log = (
        "P2P is disabled between NVLINK connected GPUs 3 and 2. This should not be the case given their "
        "connectivity, and is probably due to a hardware issue.\n"
    )
    assert answer(tmp_path, log) == ("nccl_p2p_disabled_nvlink", CRASH, Category.HARDWARE, EXCLUDE)


def test_a_deepep_dispatch_timeout_is_a_collective_hang(tmp_path):
    log = "DeepEP dispatch NVL receiver timeout, channel: 2, RDMA: 0, nvl: 5, src NVL: 1, head: 9, tail: 9\n" * 3
    assert answer(tmp_path, log) == ("deepep_dispatch_timeout", HANG, Category.UNKNOWN, SAME)


def test_an_indented_nccl_record_after_a_failure_is_not_read_as_its_continuation(tmp_path):
    log = (
        "    libfabric:7001:1700000000::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address\n"
        "    gpu-3:7001:7002 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\n"
    )
    assert diagnose_text(tmp_path, log).signature == "libfabric_cq_error"


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("RuntimeError: CUDA driver error: CUDA_ERROR_MISALIGNED_ADDRESS", "cuda_illegal_address"),
        ("cudaErrorHardwareStackError: hardware stack error at kernel.cu:88", "cuda_illegal_address"),
        ("Check failed: cudaErrorIllegalInstruction in fused_attention", "cuda_illegal_address"),
        ("HIP failure: hipErrorIllegalAddress at ops.hip:120", "cuda_illegal_address"),
        ("E0101 00:00:00.1 gpu_timer.cc:90] CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out", "cuda_launch_failure"),
        ("hip runtime error: hipErrorLaunchFailure (719)", "cuda_launch_failure"),
        ("RuntimeError: hipErrorECCNotCorrectable while copying", "cuda_ecc_uncorrectable"),
        ("cuMemcpyDtoH failed: CUDA_ERROR_NVLINK_UNCORRECTABLE", "xid_74_nvlink"),
    ],
)
def test_a_cuda_or_hip_error_enum_is_read_as_the_error_it_names(tmp_path, line, signature):
    assert diagnose_text(tmp_path, line + "\n").signature == signature


@pytest.mark.parametrize(
    "line",
    [
        "[   21.7] NVRM kgspExecuteBooterLoad_TU102: failed to execute Booter Load: 0x55",
        "NVRM: s_executeBooterUcode_TU102: Booter failed with non-zero error code: 0xa",
    ],
)
def test_a_gsp_booter_failure_is_the_gsp_firmware_fault_with_or_without_the_colon_after_nvrm(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("gsp_firmware_fault", CRASH, Category.SYSTEM_SOFTWARE, EXCLUDE)
