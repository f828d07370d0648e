"""Recognition from the NVIDIA kernel driver's own messages and the daemons beside it (issue 9, eleventh pass).

The lines are built from what the software prints, not from corpus excerpts:

- the driver: Debian trixie non-free ``nvidia-kernel-source`` 550.163.01 (``nvidia/nv.c``, ``nvidia/nv-pci.c``,
  ``common/inc/os-interface.h``'s ``NV_DEV_PRINTF`` prefix "NVRM: GPU %04x:%02x:%02x.%x: ", and ``strings -n 8`` of
  ``nv-kernel.o_binary``: the Xid formats, the fallen-off-the-bus banner, ``RmInitAdapter failed!``, the GSP
  rate-limit notice and task error, the power-cable message, the NVSwitch driver's ``SXid`` formats) and bookworm
  non-free ``nvidia-tesla-470-kernel-source`` 470.256.02 (the older Xid form ``pid=%u, %s`` without ``name=``);
  the GFW boot messages of open-gpu-kernel-modules ``kern_gpu_tu102.c`` / ``kernel_gsp_tu102.c``;
- ``nvidia-peermem`` of the same source (``peer_err``: "nvidia-peermem %s:%d ERROR ...");
- ``nvidia-smi`` 550.163.01 (trixie non-free, ``strings``);
- fabric manager's log lines ("detected NVSwitch fatal|non-fatal error N on fid ...", the topology abort), in the
  form NVIDIA's gpud parses them (fabric manager is not packaged in Debian);
- cuFile: ``cufile.h`` of PyPI ``nvidia-cufile-cu12`` 1.14.1.1 (``CUfileOpError`` and its texts).

Each case is one log given to ``diagnose_files``, the function behind ``lazarus diagnose``; each family has lines
that must stay no failure (notices, dumps that follow an error, non-fatal reports the software continues after).
"""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
APP, SYS, HW = Category.APPLICATION, Category.SYSTEM_SOFTWARE, Category.HARDWARE
NO_FAILURE = (None, NONE, Category.UNKNOWN, None)
K = "[ 8123.456789] "  # a dmesg line's kernel timestamp
SYSLOG = "Dec  1 09:00:03 node3 kernel: "

# The driver's Xid formats: 550.163.01 (pid=%s, name=%s; with and without the MIG instance ids) and
# 470.256.02 (pid=%u, no name)
XID_FORMS = [
    "NVRM: Xid (PCI:0000:3b:00): {code}, pid='<unknown>', name=<unknown>, {text}",
    "NVRM: Xid (PCI:0000:3b:00 GPU-I:01): {code}, pid=4242, name=python, {text}",
    "NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): {code}, pid=4242, name=pt_main_thread, {text}",
    "NVRM: Xid (PCI:0000:3b:00): {code}, pid=4242, {text}",
    "NVRM: Xid (PCI:0000:3b:00 GPU-I:02): {code}, pid=4242, {text}",
    "NVRM: Xid (PCI:0000:3b:00 GPU-I:02 GPU-CI:01): {code}, pid=4242, {text}",
]
# a header each way a kernel line reaches a job's log: dmesg, dmesg -T, journalctl -k, rsyslog ISO, dmesg -x
HEADERS = [
    K,
    "[Tue Dec  1 09:00:03 2026] ",
    SYSLOG,
    "2026-12-01T09:00:03.123456+00:00 node3 kernel: ",
    "kern  :err   : [Tue Dec  1 09:00:03 2026] ",
]
XIDS = [
    (79, "GPU has fallen off the bus.", "xid_79_fallen_off_bus"),
    (
        48,
        "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 4, subpartition 1.",
        "xid_48_double_bit_ecc",
    ),
    (
        64,
        "Row Remapper Error: (0x0000000012345678) - All reserved rows for bank are remapped",
        "xid_64_remap_failure",
    ),
    (
        119,
        "Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
        "xid_gsp_firmware",
    ),
    (
        120,
        "GSP Error: Task 1 raised error code 0x2 for reason 0x5 at 0x1234.  The GPU likely needs to be reset.",
        "xid_gsp_firmware",
    ),
]


@pytest.mark.parametrize("form", XID_FORMS)
@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize(("code", "text", "signature"), XIDS)
def test_every_xid_format_of_the_driver_reaches_the_xid_catalogue(tmp_path, form, header, code, text, signature):
    line = header + form.format(code=code, text=text)
    assert answer(tmp_path, line + "\n")[0] == signature


def test_an_xid_line_with_a_syslog_header_names_the_node(tmp_path):
    line = SYSLOG + XID_FORMS[0].format(code=79, text="GPU has fallen off the bus.")
    assert diagnose_text(tmp_path, line + "\n").implicated_nodes == ["node3"]


@pytest.mark.parametrize(
    "text",
    [
        # Xid 63: a row marked for remapping or a page retired, applied at the next reset (a note, not a failure)
        "Row Remapper: New row (0x0000000012345678) marked for remapping, reset gpu to activate.",
        "Dynamic Page Retirement: New page retired, reboot to activate (0x00000000002ce8ac).",
    ],
)
def test_an_xid_63_pending_remap_or_retirement_stays_no_failure(tmp_path, text):
    assert kind_of(tmp_path, K + XID_FORMS[0].format(code=63, text=text)) is NONE


# ---------------------------------------------------------------- the driver's lines outside an Xid
def test_the_fallen_off_the_bus_banner_printed_as_three_kernel_lines_is_found(tmp_path):
    text = (
        f"{K}NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:2330)\n"
        f"{K}NVRM: installed in this system has\n"
        f"{K}NVRM: fallen off the bus and is not responding to commands.\n"
    )
    assert answer(tmp_path, text) == ("xid_79_fallen_off_bus", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        # nv-pci.c: the PCI error handler, and a GPU still unreachable after the kernel re-enabled MMIO
        ("NVRM: GPU 0000:3b:00.0: A fatal error was detected.", "pcie_aer_fatal"),
        (
            "NVRM: GPU 0000:3b:00.0: The kernel has enabled MMIO for the device,\n"
            + K
            + "NVRM: but it still appears unreachable. The device\n"
            + K
            + "NVRM: will not function properly until it is reset.",
            "pcie_aer_fatal",
        ),
        # nv-kernel.o: the GPU lacks its external power; nv.c: the open part of a failed init
        ("NVRM: GPU 0000:3b:00.0: GPU does not have the necessary power cables connected.", "nvml_gpu_fault"),
        ("NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0", "gpu_lost"),
        ("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x62:0x65:1637)", "gpu_lost"),
    ],
)
def test_a_gpu_the_driver_cannot_reach_power_or_start_excludes_the_node(tmp_path, line, signature):
    assert answer(tmp_path, K + line + "\n") == (signature, CRASH, HW, EXCLUDE)


def test_a_probe_that_failed_for_a_device_is_the_nodes_driver_setup(tmp_path):
    line = K + "NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
    assert answer(tmp_path, line) == ("nvrm_no_adapter", CRASH, SYS, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:3b:00 (printing 1 of every 30).  The GPU "
        "likely needs to be reset.",
        "NVRM: GPU0 _kgspLogRpcDebugInfo: GSP Error: Task 1 raised error code 0x2 for reason 0x5 at 0x1234.  The "
        "GPU likely needs to be reset.",
        "NVRM: _kgspRpcRecvPoll: Timeout after 45s of waiting for RPC response from GPU0 GSP! Expected function "
        "10 (FREE) (0x5c000001 0x0).",
        # open-gpu-kernel-modules kern_gpu_tu102.c / kernel_gsp_tu102.c: the boot firmware did not finish
        "NVRM: GPU0 gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: (progress 0x1)",
        "NVRM: GPU0 kgspWaitForGfwBootOk_TU102: failed to wait for GFW boot complete: 0x55 VBIOS version "
        "94.02.26.48.52",
    ],
)
def test_gsp_failures_outside_an_xid_line_exclude_the_node_until_the_gpu_is_reset(tmp_path, line):
    assert answer(tmp_path, K + line + "\n") == ("gsp_firmware_fault", CRASH, SYS, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.163.01  Tue Apr  8 12:00:00 UTC 2025",
        "NVRM: GPU at PCI:0000:3b:00: GPU-d4ccf738-605f-2bbe-3fb5-7ff781421542",
        "NVRM: GPU Board Serial Number: 1652923017935",
        "NVRM: GPU 0000:3b:00.0: GPU serial number is 1652923017935.",
        "NVRM: GPU 0000:3b:00.0: RmInitAdapter succeeded!",
        "NVRM: Persistence mode is deprecated and will be removed in a future release. Please use "
        "nvidia-persistenced instead.",
        # the RPC dump that follows a GSP timeout (the timeout's own line decides)
        "NVRM: GPU0 RPC history (CPU -> GSP):",
        "NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data 0x0000000020800a4c "
        "0x0000000000000004.",
        # the crash-dump notice printed after a GPU error (the error's own line decides)
        "NVRM: A GPU crash dump has been created. If possible, please run",
        # nvidia-peermem: a registration the consumer (NCCL, the verbs call) reports and acts on
        "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing",
        "nvidia-peermem nv_mem_get_pages:404 ERROR error -22 while calling nvidia_p2p_get_pages()",
    ],
)
def test_the_drivers_notices_and_dumps_stay_no_failure(tmp_path, line):
    assert answer(tmp_path, K + line + "\n") == NO_FAILURE


# ---------------------------------------------------------------- NVSwitch and fabric manager
SX = SYSLOG + "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): "


@pytest.mark.parametrize(
    "line",
    [
        SX + "20034, Fatal, Link 28 LTSSM Fault Up",
        SX + "24007, Severity 1 Engine instance 12 Sub-engine instance 00",
        SX + "26006, SOE Watchdog error",
        "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus "
        "id 00000000:86:00.0 physical id 3 port 33",
    ],
)
def test_a_fatal_sxid_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("nvswitch_sxid", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        SX + "12028, Non-fatal, Link 45 egress non-posted PRIV error (First)",
        SX + "12028, Severity 0 Engine instance 45 Sub-engine instance 00",
        SX + "11012, Correctable, Link 03 ingress single bit ECC",
        SX + "10005, Correctable, thermal alert: throttling enabled.",
        SX + "12028, Data {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, "
        "0x00000000}",
        "[Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch "
        "pci bus id 00000000:86:00.0 physical id 3 port 61",
        SYSLOG + "nv-fabricmanager[2231]: detected NVLink non-fatal error on GPU 3 link 7",
    ],
)
def test_a_non_fatal_or_correctable_sxid_is_no_failure(tmp_path, line):
    """NVIDIA's Fabric Manager guide: non-fatal SXids are informational and running jobs go on; the driver's
    severity 0 is NVSWITCH_ERROR_SEVERITY_NONFATAL."""
    assert kind_of(tmp_path, line) is NONE


def test_a_non_fatal_sxid_is_reported_as_a_note(tmp_path):
    result = diagnose_text(tmp_path, SX + "12028, Non-fatal, Link 45 egress non-posted PRIV error (First)\n")
    assert any("nvswitch_sxid_nonfatal" in note for note in result.notes), result.notes


def test_fabric_manager_giving_up_on_the_topology_is_the_nodes_fabric_setup(tmp_path):
    line = (
        "[Jul 09 2024 18:14:07] [ERROR] [tid 99999] detected number of NVSwitches don't match with any supported "
        "system topology, aborting fabric manager\n"
    )
    assert answer(tmp_path, line) == ("gpu_fabric_not_initialized", CRASH, SYS, EXCLUDE)


# ---------------------------------------------------------------- nvidia-smi
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("No devices were found", ("nvrm_no_adapter", CRASH, SYS, EXCLUDE)),
        (
            "Unable to communicate with GPU because it is insufficiently powered.",
            ("nvml_gpu_fault", CRASH, HW, EXCLUDE),
        ),
        (
            "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover "
            "this GPU",
            ("gpu_lost", CRASH, HW, EXCLUDE),
        ),
    ],
)
def test_nvidia_smis_own_failure_messages_are_found(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


def test_a_sentence_that_only_contains_no_devices_were_found_stays_no_failure(tmp_path):
    assert kind_of(tmp_path, "INFO: No devices were found matching the filter, using defaults") is NONE


# ---------------------------------------------------------------- cuFile (GPUDirect Storage)
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: cuFile error: CU_FILE_DRIVER_NOT_INITIALIZED",
        "cuFileDriverOpen error: nvidia-fs driver is not loaded. Set allow_compat_mode to true in cufile.json file "
        "to enable compatible mode",
        "cuFileHandleRegister failed: CU_FILE_NVFS_SETUP_ERROR",
        "kvikio.CUFileError: CU_FILE_DRIVER_VERSION_MISMATCH: nvidia-fs driver version mismatch",
        "cuFileDriverOpen failed: CU_FILE_PLATFORM_NOT_SUPPORTED",
    ],
)
def test_a_node_without_a_working_nvidia_fs_driver_is_system_software(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("cuda_environment_error", CRASH, SYS, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "kvikio.CUFileError: CU_FILE_DIO_NOT_SET: fd direct IO not set",
        "cuFileRead failed: CU_FILE_INVALID_VALUE",
        "cuFileRead failed: CU_FILE_MEMORY_NOT_REGISTERED",
        "RuntimeError: cuFile error: CU_FILE_CUDA_POINTER_INVALID",
    ],
)
def test_cufiles_refusals_of_the_callers_request_stop_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("cuda_usage_error", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "cuFileBufRegister: CU_FILE_MEMORY_ALREADY_REGISTERED",
        "cuFileHandleRegister: CU_FILE_HANDLE_ALREADY_REGISTERED",
        "cuFileDriverOpen: CU_FILE_DRIVER_ALREADY_OPEN",
    ],
)
def test_cufile_already_registered_or_open_stays_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ---------------------------------------------------------------- the prefilter
NEW_KEYWORDS = {
    "nvswitch_sxid_nonfatal": ["SXid", "NVSwitch non-fatal error"],
    "nvswitch_sxid": ["NVSwitch fatal error"],
    "gsp_firmware_fault": ["GSP Error: Task", "GSP! Expected function", "GFW_BOOT", "GFW boot complete"],
    "gpu_lost": ["NVRM: GPU "],
    "nvml_gpu_fault": ["NVRM: GPU ", "Unable to communicate with GPU because"],
    "pcie_aer_fatal": ["NVRM: GPU ", "NVRM: but it still appears unreachable"],
    "nvrm_no_adapter": ["NVIDIA probe routine failed", "No devices were found"],
    "gpu_fabric_not_initialized": ["NVSwitches don"],
    "cuda_environment_error": ["CU_FILE_", "Set allow_compat_mode"],
    "cuda_usage_error": ["CU_FILE_"],
}


@pytest.mark.parametrize(("signature_id", "keywords"), sorted(NEW_KEYWORDS.items()))
def test_this_passes_keywords_start_with_a_capital_so_the_prefilter_stops_nowhere_new(signature_id, keywords):
    """A keyword starting with a common lower-case letter makes the prefilter stop at many positions of healthy
    lines (docs/adding-a-signature.md)."""
    catalogue_keywords = default_catalogue().get(signature_id).keywords
    assert set(keywords) <= set(catalogue_keywords)
    assert all(k[0].isupper() for k in keywords), keywords


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: NVLink: Failed to train link 3 to remote PCI:0000:3b:00",
        "NVRM: NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
        "NVRM: NVLink MINION: link 5 interrupts disabled due to fatal MINION error: INTR_CODE = 0x1, SUBCODE = 0x0",
    ],
)
def test_a_gpu_nvlink_that_fails_outside_an_xid_line_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, K + line + "\n") == ("nvswitch_sxid", CRASH, HW, EXCLUDE)
