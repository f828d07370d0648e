"""Recognition from the node's own health tools and the container runtime, tenth pass of issue 9: the strings
that ipmitool 1.8.19 (its SEL event texts), rasdaemon 0.6.8 (its trace records and ras-mc-ctl's summary),
smartmontools 7.3 (smartctl and smartd), the Linux 6.1 kernel's thermal code (mce/therm_throt.c,
drivers/thermal, kernel/reboot.c), runc 1.1.5 and containerd 1.6.20 print (Debian bookworm packages). Each line
here is built from a format string of the binary or the source, not copied from a corpus excerpt. Every family
also pins lines that must stay "no failure": the tool prints them when the event is informational, corrected,
or recovered by the hardware itself."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_EXCLUDING_NODES
APP, HW, SYS = Category.APPLICATION, Category.HARDWARE, Category.SYSTEM_SOFTWARE

SEL = "  1a | 12/01/2026 | 05:00:01 | {sensor} | {event} | {state}"


# --------------------------------------------------------------------------------------------- ipmitool 1.8.19


@pytest.mark.parametrize(
    ("sensor", "event"),
    [
        ("Memory #0x87", "Uncorrectable ECC"),
        ("Processor #0x04", "IERR"),
        ("Processor CPU0_Status", "Thermal Trip"),
        ("Processor #0x04", "Uncorrectable machine check exception"),
        ("Power Supply PSU1_Status", "Failure detected"),
        ("Power Supply PSU2_Status", "Power Supply AC lost"),
        ("Critical Interrupt #0x19", "PCI SERR"),
        ("Critical Interrupt PCIe_Err", "Bus Uncorrectable error"),
        ("Critical Interrupt PCIe_Err", "Bus Fatal Error"),
        ("Temperature CPU0_Temp", "Upper Non-recoverable going high"),
    ],
)
def test_a_hardware_fault_the_bmc_asserts_in_its_event_log_excludes_the_node(tmp_path, sensor, event):
    line = SEL.format(sensor=sensor, event=event, state="Asserted")
    assert answer(tmp_path, line + "\n") == ("bmc_sel_hardware_fault", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    ("sensor", "event", "state"),
    [
        ("Memory CPU1_DIMM_A1", "Correctable ECC", "Asserted"),
        ("Memory #0x87", "Correctable ECC logging limit reached", "Asserted"),
        ("Temperature CPU0_Temp", "Upper Critical going high", "Asserted"),
        ("Fan FAN3", "Lower Critical going low", "Asserted"),
        ("Power Supply PSU1_Status", "Failure detected", "Deasserted"),
    ],
)
def test_corrected_threshold_and_deasserted_bmc_events_are_no_failure(tmp_path, sensor, event, state):
    assert kind_of(tmp_path, SEL.format(sensor=sensor, event=event, state=state) + "\n") is NONE


# -------------------------------------------------------------------------------------------- rasdaemon 0.6.8

RAS = "rasdaemon: {event}: 2026-12-01 05:00:01 +0000 {body}"


@pytest.mark.parametrize(
    "line",
    [
        RAS.format(
            event="mc_event",
            body="1 Uncorrected error: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (mc: 0 location: 0:1:0)",
        ),
        RAS.format(event="mce_record", body="bank=8, status= be00000000800400, Uncorrected error, cpu=3"),
        RAS.format(event="aer_event", body="0000:3b:00.0 Uncorrected (Fatal) error: Completion Timeout"),
        RAS.format(event="memory_failure_event", body="pfn=0x12345 page_type=dirty LRU page action_result=Failed"),
        # ras-mc-ctl --summary
        "\tUncorrected error on DIMM Label(s): 'CPU_SrcID#0_MC#0_Chan#1_DIMM#0' location: 0:1:0:-1 errors: 2",
        "\t3 Uncorrected (Fatal) errors: Completion Timeout",
    ],
)
def test_an_uncorrected_error_rasdaemon_records_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("rasdaemon_uncorrected_error", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        RAS.format(event="mc_event", body="1 Corrected error: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0"),
        RAS.format(event="aer_event", body="0000:3b:00.0 Corrected error: Receiver Error"),
        RAS.format(event="aer_event", body="0000:3b:00.0 Uncorrected (Non-Fatal) error: Completion Timeout"),
        RAS.format(event="memory_failure_event", body="pfn=0x12345 page_type=free buddy page action_result=Recovered"),
        "No Memory errors.",
    ],
)
def test_corrected_and_recovered_errors_rasdaemon_records_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ---------------------------------------------------------------------------------------- smartmontools 7.3


@pytest.mark.parametrize(
    "line",
    [
        "SMART overall-health self-assessment test result: FAILED!",
        "smartd[812]: Device: /dev/sda [SAT], FAILED SMART self-check. BACK UP DATA NOW!",
        "smartd[812]: Device: /dev/nvme0, Critical Warning (0x04): Reliability",
        "  5 Reallocated_Sector_Ct   0x0033   001   001   036    Pre-fail  Always   FAILING_NOW 4000",
    ],
)
def test_a_drive_that_fails_its_smart_health_check_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("smart_health_failed", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        "SMART overall-health self-assessment test result: PASSED",
        "smartd[812]: Device: /dev/sda [SAT], SMART health: passed",
        "smartd[812]: Device: /dev/sda [SAT], 8 Currently unreadable (pending) sectors",
        "smartd[812]: Device: /dev/sda [SAT], SMART Usage Attribute: 194 Temperature_Celsius changed from 64 to 66",
        "  5 Reallocated_Sector_Ct   0x0033   100   100   036    Pre-fail  Always       -       0",
    ],
)
def test_smart_warnings_and_a_passed_verdict_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# --------------------------------------------------------------------------------- the Linux 6.1 thermal code


@pytest.mark.parametrize(
    "line",
    [
        "kernel: thermal thermal_zone0: critical temperature reached (105 C), shutting down",
        # linux 6.1 prints the thermal core's line, then the shutdown's reason
        "kernel: thermal thermal_zone2: acpitz: critical temperature reached, shutting down\n"
        "kernel: reboot: HARDWARE PROTECTION shutdown (Temperature too high)",
        "kernel: reboot: HARDWARE PROTECTION shutdown (Temperature too high)",
    ],
)
def test_a_critical_temperature_shutdown_excludes_the_node(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("host_thermal_critical_shutdown", CRASH, HW, EXCLUDE)


def test_a_cpu_clock_throttled_for_temperature_is_a_note_not_a_failure(tmp_path):
    # the hardware recovers by itself; a host under heavy load prints it and finishes its work
    log = "kernel: CPU12: Package temperature above threshold, cpu clock throttled (total events = 4021)\n"
    result = diagnose_text(tmp_path, log)
    assert result.failure_kind is NONE
    assert any("host_cpu_thermal_throttle" in note for note in result.notes)


def test_a_throttled_cpu_does_not_outrank_a_crash_in_the_same_file(tmp_path):
    log = (
        "kernel: CPU3: Core temperature above threshold, cpu clock throttled (total events = 12)\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    assert kind_of(tmp_path, log) is CRASH


@pytest.mark.parametrize(
    "line", ["kernel: CPU12: Package temperature/speed normal", "kernel: CPU3: Core temperature/speed normal"]
)
def test_the_cpu_back_at_normal_speed_is_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# --------------------------------------------------------------------------- runc 1.1.5 and containerd 1.6.20

SHIM = "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: "


def test_a_container_the_runtime_cannot_create_on_the_node_restarts_elsewhere(tmp_path):
    line = SHIM + 'unable to start container process: error during container init: error mounting "/dev/shm": unknown.'
    assert answer(tmp_path, line + "\n") == ("container_runtime_create_failed", CRASH, SYS, EXCLUDE)


def test_a_container_command_missing_from_the_image_stops(tmp_path):
    line = SHIM + 'unable to start container process: exec: "torchrun": executable file not found in $PATH: unknown.'
    assert answer(tmp_path, line + "\n") == ("container_entrypoint_not_found", CRASH, APP, STOP)


def test_a_failing_gpu_hook_inside_the_runtime_error_keeps_its_own_reading(tmp_path):
    line = (
        SHIM + "unable to start container process: error during container init: error running hook #0: error running "
        "hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded"
    )
    assert diagnose_text(tmp_path, line + "\n").signature == "container_gpu_init_failed"


@pytest.mark.parametrize(
    "line",
    [
        'time="2026-12-01T05:00:01Z" level=info msg="starting containerd" revision= version=1.6.20~ds1',
        'time="2026-12-01T05:00:01Z" level=info msg="shim disconnected" id=abc123',
    ],
)
def test_the_runtimes_routine_messages_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE
