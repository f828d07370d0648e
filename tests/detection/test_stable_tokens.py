"""Recognition by stable tokens, third pass of issue 9: CUDA and NCCL result strings, the driver's own
messages, the kernel's block-layer statuses and Slurm's PMIx plugin, whatever tool printed them; and the
rule that a link fault whose peer maps to no node excludes nothing. Each case is one log given to
``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

CRASH = FailureKind.CRASH
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES


@pytest.mark.parametrize(
    ("text", "signature", "category", "advice"),
    [
        # CUDA error 46 (cudaErrorDevicesUnavailable), as Caffe and a CUDA helper macro print it
        (
            "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable",
            "cuda_devices_unavailable",
            Category.APPLICATION,
            STOP,
        ),
        (
            "/home/u/stencil/local_domain.cuh@54: CUDA Runtime Error(46): all CUDA-capable devices are busy or "
            "unavailable",
            "cuda_devices_unavailable",
            Category.APPLICATION,
            STOP,
        ),
        # NCCL's answer to an NCCL_ALGO/NCCL_PROTO the topology cannot run
        (
            "202: :41368:41368 [2] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available",
            "nccl_no_algorithm",
            Category.APPLICATION,
            STOP,
        ),
        # cudaErrorIllegalAddress reported by a call other than the one the old pattern expected
        (
            "[1,25]<stderr>:  what():  cudaEventQuery failed: an illegal memory access was encountered",
            "cuda_illegal_address",
            Category.APPLICATION,
            STOP,
        ),
        # the driver mismatch as nvidia-container-cli spells it (lower case)
        (
            "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown",
            "gpu_driver_mismatch",
            Category.SYSTEM_SOFTWARE,
            EXCLUDE,
        ),
        # the NVIDIA module loaded but bound no GPU
        (
            "[188497.595099] NVRM: No NVIDIA graphics adapter probed!\n"
            "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).",
            "nvrm_no_adapter",
            Category.SYSTEM_SOFTWARE,
            EXCLUDE,
        ),
        # a data-loader bus error in another framework's wording
        (
            "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient "
            "shared memory (shm), please check whether use_shared_memory is set",
            "shm_too_small",
            Category.APPLICATION,
            STOP,
        ),
        # NaN loss as TensorFlow and a plain logger print it
        ("ERROR:tensorflow:Model diverged with loss = NaN.", "nan_loss", Category.APPLICATION, STOP),
        (
            "[2023-08-30 16:29:49,699][pretrain.py][INFO] Epoch:[0/2](7000/293491) loss:nan lr:0.0000987",
            "nan_loss",
            Category.APPLICATION,
            STOP,
        ),
        # any block-layer status, repeated, not only "I/O error"
        (
            "[275808.417983] blk_update_request: operation not supported error, dev nvme0n1, sector 0 op 0x0:(READ)\n"
            "[275808.417988] Buffer I/O error on dev nvme0n1, logical block 0, async page read",
            "storage_block_io_error",
            Category.HARDWARE,
            EXCLUDE,
        ),
        # Slurm's PMIx plugin reporting an error is a scheduler error
        (
            "[2021-01-18T13:46:23.140] [142913.0] error: b1275 [0] pmixp_client_v2.c:210 [_errhandler] mpi/pmix: "
            "ERROR: Error handler invoked: status = -25: Success (0)",
            "generic_scheduler_error",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        # an RDMA work completion error in the "from peer" form of newer NCCL (4: local protection error)
        (
            "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer "
            "10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
            "ib_completion_error",
            Category.INFRASTRUCTURE,
            SAME,
        ),
        # execve's EACCES at launch: the program may not be executed, every retry fails the same way
        (
            "slurmstepd: error: execve(): start-agent.sh: Permission denied",
            "launch_executable_missing",
            Category.APPLICATION,
            STOP,
        ),
        # NVML's Unknown Error in a container: its device access was reset under it; a new container works
        (
            "root@7a3c:/# nvidia-smi\nFailed to initialize NVML: Unknown Error",
            "nvml_unknown_error_container",
            Category.SYSTEM_SOFTWARE,
            SAME,
        ),
    ],
)
def test_a_failure_is_recognised_by_its_stable_token_whatever_prints_it(tmp_path, text, signature, category, advice):
    result = diagnose_text(tmp_path, text + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        signature,
        CRASH,
        category,
        advice,
    )
    assert result.implicated_nodes == []


def test_a_link_fault_whose_peer_maps_to_no_node_is_retried_as_is(tmp_path):
    text = (
        "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
        "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "ib_retry_exceeded"
    assert (result.retry_advice, result.implicated_nodes) == (SAME, [])


def test_a_link_fault_whose_peer_is_known_still_excludes_that_node(tmp_path):
    text = (
        "node3:100:200 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.3<0>\n"
        "node1:100:200 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.3<54862> with status=12 opcode=0 "
        "len=0 vendor err 129 (Recv)\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "ib_retry_exceeded"
    assert (result.retry_advice, result.implicated_nodes) == (EXCLUDE, ["node3"])


def test_a_node_that_registers_fewer_gpus_than_configured_is_excluded_by_name(tmp_path):
    text = (
        "May 23 12:49:52 mgmt1 slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL with "
        "reason:gres/gpu count reported lower than configured (3 < 4)\n"
    )
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.category) == ("slurm_gres_count_low", Category.INFRASTRUCTURE)
    assert (result.retry_advice, result.implicated_nodes) == (EXCLUDE, ["nodegpu1"])


def test_a_gpu_count_reason_without_a_node_name_blames_no_node(tmp_path):
    result = diagnose_text(tmp_path, "Reason=gres/gpu count reported lower than configured (0 < 8)\n")
    assert (result.signature, result.retry_advice, result.implicated_nodes) == ("slurm_gres_count_low", EXCLUDE, [])


def test_a_broken_socket_alone_is_of_unknown_category_and_retried(tmp_path):
    # The peer died or the network failed: the line cannot say which (5 of 7 real excerpts are labelled unknown).
    result = diagnose_text(tmp_path, "node1:2345:2399 [0] NCCL WARN NET/Socket : socket progress error: Broken pipe\n")
    assert (result.signature, result.category, result.retry_advice) == ("nccl_socket_error", Category.UNKNOWN, SAME)
