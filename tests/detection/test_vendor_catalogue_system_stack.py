"""Recognition from the system stack's own message catalogues, eighth pass of issue 9: the strings that Slurm
22.05.8 (slurmstepd, srun, libslurmfull and the task/cgroup plugin), libibverbs 44.0, UCX 1.13.1, libfabric
1.17.0, Open MPI 4.1.4 (its help-*.txt files) and the Linux 6.1 kernel (printk formats of mce, AER, NVMe, the
block layer, ext4, XFS, hung_task, the watchdog and the OOM killer) print. Each line here is built from a format
string of the installed binary or the source, not copied from a corpus excerpt. Every family also pins lines
that must stay "no failure": the software prints them when it is informational, or retries by itself."""

from __future__ import annotations

import pytest

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


# ------------------------------------------------------------------------------------------------ Slurm 22.05.8


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # slurmstepd's SIG_UME banner: "*** %s ON %s UNCORRECTABLE MEMORY ERROR AT %s ***"
        (
            "slurmstepd: error: *** JOB 4242 ON node07 UNCORRECTABLE MEMORY ERROR AT 2026-12-01T05:00:01 ***",
            ("slurm_uncorrectable_memory_error", CRASH, HW, EXCLUDE),
        ),
        # srun's per-task status ("%s: %s %s: %s") with the signal's strsignal text
        ("srun: error: node07: task 3: Aborted (core dumped)", ("process_aborted", CRASH, UNKNOWN, SAME)),
        ("srun: error: node07: tasks 0-7: Terminated", ("generic_external_signal", CRASH, UNKNOWN, SAME)),
        (
            "srun: error: node07: task 2: Illegal instruction (core dumped)",
            ("process_fpe_or_illegal_instruction", CRASH, APP, STOP),
        ),
        # the task/cgroup plugin's kill, "%ps exceeded memory limit (%lu > %lu), being killed" with %ps = StepId=J.S
        (
            "slurmstepd: error: StepId=4242.0 exceeded memory limit (8000000 > 7000000), being killed",
            ("host_oom_invoked", CRASH, APP, STOP),
        ),
    ],
)
def test_slurms_job_ending_banners_and_task_statuses_are_read_by_their_cause(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        "srun: error: Unable to create step for job 4242: Slurm is busy, step creation delayed",
        "srun: error: Unable to create step for job 4242: Requested nodes are busy",
    ],
)
def test_a_step_slurm_cannot_place_yet_is_no_refusal_of_the_request(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.retry_advice) == ("generic_scheduler_error", SAME)


def test_slurms_uncorrectable_memory_banner_names_the_node(tmp_path):
    log = "slurmstepd: error: *** STEP 4242.0 ON node07 UNCORRECTABLE MEMORY ERROR AT 2026-12-01T05:00:01 ***\n"
    assert diagnose_text(tmp_path, log).implicated_nodes == ["node07"]


@pytest.mark.parametrize(
    "line",
    [
        # Slurm says itself: "This may or may not result in some failure."
        "slurmstepd: error: StepId=4242.0 hit memory limit at least once during execution. "
        "This may or may not result in some failure.",
        "slurmstepd: error: StepId=4242.batch hit memory+swap limit at least once during execution. "
        "This may or may not result in some failure.",
        # a requeue is Slurm restarting the job itself
        "slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT 2026-12-01T05:00:01 DUE TO JOB REQUEUE ***",
        # srun retries the step creation by itself
        "srun: Job 4242 step creation temporarily disabled, retrying (Requested nodes are busy)",
        # RPCs and set-up steps Slurm repeats by itself, logged as errors
        "slurmstepd: error: Rank 0 failed sending step completion message directly to slurmctld, retrying",
        "srun: error: Slurm controller not responding, sleeping and retrying.",
        "slurmstepd: error: Retrying job complete RPC for StepId=4242.0",
        "slurmstepd: error: mpi/pmix_v3: pmixp_usock_create_srv: gpu07 [0]: pmixp_utils.c:105: connect refused, retrying",
    ],
)
def test_slurms_memory_limit_note_requeue_and_what_it_retries_by_itself_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ------------------------------------------------------------------------------------- libibverbs 44.0 (rdma-core)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # ibv_wc_status_str's texts as perftest and the verbs examples print them: "Failed status %s (%d) for wr_id %d"
        ("Failed status remote access error (10) for wr_id 2", ("ib_completion_error", CRASH, INFRA, SAME)),
        ("Failed status RNR retry counter exceeded (13) for wr_id 7", ("ib_completion_error", CRASH, INFRA, SAME)),
        (
            "Failed status transport retry counter exceeded (12) for wr_id 7",
            ("ib_completion_error", CRASH, INFRA, SAME),
        ),
        ("Failed status local protection error (4) for wr_id 0", ("ib_completion_error", CRASH, INFRA, SAME)),
        ("Failed status Work Request Flushed Error (5) for wr_id 3", ("ib_flush_error", CRASH, INFRA, SAME)),
        # a status= field holding the text
        (
            "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<39322> with "
            "status=remote operation error(11) opcode=1 len=0 vendor err 137 (Send)",
            ("ib_completion_error", CRASH, INFRA, SAME),
        ),
        # ibv_event_type_str's error events on a CQ or work queue
        (
            "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : CQ error",
            ("ib_qp_fatal", CRASH, SYS, SAME),
        ),
        (
            "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : local access violation work queue error",
            ("ib_qp_fatal", CRASH, SYS, SAME),
        ),
    ],
)
def test_an_ibverbs_work_completion_or_async_error_event_is_a_fabric_failure(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : GID table change",
        "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : port active",
        "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : client reregistration",
        "gpu1:2345:2390 [0] NCCL WARN NET/IB : Got async event : SRQ limit reached",
        "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': libvmw_pvrdma-rdmav34.so: "
        "cannot open shared object file: No such file or directory",
        "libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.",
    ],
)
def test_informational_ibverbs_events_and_driver_warnings_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ------------------------------------------------------------------------------------------------- UCX 1.13.1


@pytest.mark.parametrize(
    "line",
    [
        # libucp: "error '%s' on %s will not be handled since no error callback is installed" (ucs_status_string)
        "[1701234567.123456] [gpu1:12345:0]        ucp_ep.c:1503 UCX  ERROR ep 0x7f00: error 'Endpoint timeout' "
        "on rc_mlx5/mlx5_0:1 will not be handled since no error callback is installed",
        "[1701234567.123456] [gpu1:12345:0]        ucp_ep.c:1503 UCX  ERROR ep 0x7f00: error 'Connection reset by "
        "remote peer' on tcp/eth0 will not be handled since no error callback is installed",
        # libuct: "Fatal: UD endpoint %p to %s: unhandled timeout error"
        "[1701234567.123456] [gpu1:12345:0]        ud_ep.c:278  Fatal: UD endpoint 0x1a2b to <no debug data>: "
        "unhandled timeout error",
        # Open MPI's pml/ucx at wire-up
        "[1701234567.123456] [gpu1:12345:0]    pml_ucx.c:424  Error: ucp_ep_create(proc=3) failed: "
        "Destination is unreachable",
    ],
)
def test_a_ucx_endpoint_error_nobody_handles_is_a_crash_of_unknown_cause_retried_in_place(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("ucx_endpoint_failed", CRASH, UNKNOWN, SAME)


def test_ucxs_receive_not_ready_completion_with_its_hyphens_is_a_completion_error(tmp_path):
    line = "[gpu1:12345:0:12345] ib_mlx5_log.c:177  Receive-no-ready retry count exceeded on mlx5_0:1/IB (synd 0x16)"
    assert answer(tmp_path, line + "\n") == ("ucx_completion_error", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "[1701234567.123456] [gpu1:12345:0]    ucp_context.c:1234 UCX  WARN  transport 'rc' is not available, "
        "please use one or more of: cma, self, sm, tcp",
        # UCX probes devices it does not use and carries on
        "[1701234567.123456] [gpu1:12345:0]     ib_iface.c:1234 UCX  ERROR ibv_create_cq(cqe=4096) failed: "
        "Cannot allocate memory",
    ],
)
def test_ucx_warnings_and_probing_errors_it_carries_on_from_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


def test_a_ucx_caught_signal_is_read_by_its_signal(tmp_path):
    line = "[gpu1:12345:0:12345] Caught signal 8 (Floating point exception: integer divide by zero)"
    assert answer(tmp_path, line + "\n") == ("process_fpe_or_illegal_instruction", CRASH, APP, STOP)


# ------------------------------------------------------------------------------------------- libfabric 1.17.0


@pytest.mark.parametrize(
    "line",
    [
        # "%s:%d:%ld:%s:%s:%s:%s():%d<%s> %s" from the EFA provider's tx error handlers
        "libfabric:4521:1701234567::efa:cq:efa_rdm_pke_handle_tx_error():524<warn> err: 113, message: "
        "Unresponsive receiver (peer: fi_addr_efa://[fe80::1]:1:12345) (12)",
        "libfabric:4521:1701234567::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 21, "
        "prov_err: Unknown error -21 (21)",
    ],
)
def test_a_libfabric_provider_tx_error_is_a_crash_of_unknown_cause_retried_in_place(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("libfabric_cq_error", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "libfabric:4521:1701234567::core:core:ofi_register_provider():123<info> registering provider: efa (1.17.0)",
        "libfabric:4521:1701234567::efa:ep_ctrl:efa_rdm_ep_close():123<warn> Unable to close ep",
    ],
)
def test_libfabric_info_lines_and_teardown_warnings_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# --------------------------------------------------------------------------------------------- Open MPI 4.1.4


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # help-orterun.txt [orterun:proc-aborted-strsignal]
        (
            "mpirun noticed that process rank 3 with PID 4521 on node gpu07 exited on signal 9 (Killed).",
            ("process_killed_sigkill", CRASH, APP, STOP),
        ),
        (
            "mpirun noticed that process rank 3 with PID 4521 on node gpu07 exited on signal 6 (Aborted).",
            ("process_aborted", CRASH, UNKNOWN, SAME),
        ),
        # help-mpi-api.txt [mpi-abort]
        (
            "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1.",
            ("mpi_abort_called", CRASH, APP, STOP),
        ),
        # help-mpi-errors.txt: the fatal handler and the error class of the caller's arguments
        ("[gpu07:04521] *** MPI_ERR_TRUNCATE: message truncated", ("mpi_error_class", CRASH, APP, STOP)),
        ("*** MPI_ERR_COMM: invalid communicator", ("mpi_error_class", CRASH, APP, STOP)),
        (
            "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
            ("mpi_errors_are_fatal", CRASH, UNKNOWN, SAME),
        ),
        # help-errmgr-base.txt: daemons that never started or cannot connect back
        ("ORTE was unable to reliably start one or more daemons.", ("mpi_lost_daemon", CRASH, INFRA, SAME)),
        (
            "An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun.",
            ("mpi_lost_daemon", CRASH, INFRA, SAME),
        ),
        # help-ess-base.txt [slurm-error], help-mpi-runtime.txt [mpi_init:startup:pml-add-procs-fail]
        (
            'The application appears to have been direct launched using "srun",',
            ("mpi_pmi_mismatch", CRASH, APP, STOP),
        ),
        (
            "MPI_INIT has failed because at least one MPI process is unreachable",
            ("mpi_pmi_mismatch", CRASH, APP, STOP),
        ),
        # help-mpi-runtime.txt [mpi_init:startup:internal-failure]: the reason follows
        (
            "It looks like orte_init failed for some reason; your parallel process is",
            ("mpi_init_failed", CRASH, UNKNOWN, SAME),
        ),
        # help-mtl-ofi.txt [OFI call fail]
        (
            "Open MPI failed an OFI Libfabric library call (fi_endpoint).  This is highly",
            ("mpi_init_failed", CRASH, UNKNOWN, SAME),
        ),
        # help-mpi-btl-tcp.txt [client connect fail]
        (
            "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
            ("mpi_peer_disconnected", CRASH, UNKNOWN, SAME),
        ),
        # help-orte-rmaps-base.txt
        (
            "There are not enough slots available in the system to satisfy the 16",
            ("mpi_launch_config", CRASH, APP, STOP),
        ),
        # mca_btl_openib.so: "error polling %s with status %s status number %d for wr_id ..."
        (
            "error polling HP CQ with status RETRY EXCEEDED ERROR status number 12 for wr_id 94811 opcode 0  "
            "vendor error 129 qp_idx 0",
            ("ib_completion_error", CRASH, INFRA, SAME),
        ),
        (
            "error polling LP CQ with status WORK REQUEST FLUSHED ERROR status number 5 for wr_id 94811 opcode 0  "
            "vendor error 244 qp_idx 3",
            ("ib_flush_error", CRASH, INFRA, SAME),
        ),
        ("The InfiniBand retry count between two MPI processes has been", None),
    ],
)
def test_open_mpis_job_ending_help_messages_are_read_by_their_cause(tmp_path, line, expected):
    if expected is None:  # the help text wraps: the sentence ends on the next line
        log = line + '\nexceeded.  "Retry count" is defined in the InfiniBand spec 1.2 (section 12.7.38):\n'
        assert answer(tmp_path, log) == ("ib_completion_error", CRASH, INFRA, SAME)
    else:
        assert answer(tmp_path, line + "\n") == expected


def test_an_application_error_printed_before_mpi_abort_decides_the_answer(tmp_path):
    log = (
        "[rank3]: ModuleNotFoundError: No module named 'apex'\n"
        "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1.\n"
    )
    assert diagnose_text(tmp_path, log).signature == "python_import_error"


@pytest.mark.parametrize(
    "line",
    [
        "WARNING: There is at least non-excluded one OpenFabrics device found,",
        "A process has executed an operation involving a call to the",
        "The OpenFabrics stack has reported a network error event.  Open MPI will try to continue, but your job "
        "may end up failing.",
        "*** MPI_ERR_OTHER: known error not in list",
    ],
)
def test_open_mpi_warnings_and_system_error_classes_alone_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line + "\n") is NONE


# ----------------------------------------------------------------------------------------------- Linux 6.1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # arch/x86/kernel/cpu/mce/core.c mce_panic() and severity.c's fatal texts; mm/memory-failure.c
        ("Kernel panic - not syncing: Fatal machine check", ("host_mce_uncorrected", CRASH, HW, EXCLUDE)),
        (
            "mce: [Hardware Error]: Machine check: Processor context corrupt",
            ("host_mce_uncorrected", CRASH, HW, EXCLUDE),
        ),
        (
            "Memory failure: 0x1a2b3: Sending SIGBUS to python3:12345 due to hardware memory corruption",
            ("host_mce_uncorrected", CRASH, HW, EXCLUDE),
        ),
        # drivers/pci/pcie/aer.c and err.c
        (
            "pcieport 0000:00:03.1: AER: Multiple Uncorrected (Non-Fatal) error received: 0000:41:00.0",
            ("pcie_aer_fatal", CRASH, HW, EXCLUDE),
        ),
        ("pcieport 0000:00:03.1: AER: device recovery failed", ("pcie_aer_fatal", CRASH, HW, EXCLUDE)),
        # drivers/pci/pcie/dpc.c: the downstream port contained the link
        (
            "pcieport 0000:00:03.1: DPC: containment event, status:0x1f01 source:0x0000",
            ("pcie_aer_fatal", CRASH, HW, EXCLUDE),
        ),
        ("pcieport 0000:00:03.1: DPC: unmasked uncorrectable error detected", ("pcie_aer_fatal", CRASH, HW, EXCLUDE)),
        # mce_timed_out()'s panic
        (
            "Kernel panic - not syncing: Timeout: Not all CPUs entered broadcast exception handler",
            ("host_mce_uncorrected", CRASH, HW, EXCLUDE),
        ),
        # drivers/nvme/host/pci.c nvme_timeout() escalations and probe failure
        ("nvme nvme0: I/O 123 QID 4 timeout, reset controller", ("nvme_failure", CRASH, HW, EXCLUDE)),
        ("nvme nvme1: Removing after probe failure status: -19", ("nvme_failure", CRASH, HW, EXCLUDE)),
        # fs/ext4/super.c, fs/xfs/xfs_fsops.c
        ("EXT4-fs (nvme0n1p1): I/O error while writing superblock", ("local_fs_error", CRASH, HW, EXCLUDE)),
        (
            "XFS (dm-0): Please unmount the filesystem and rectify the problem(s)",
            ("local_fs_error", CRASH, HW, EXCLUDE),
        ),
        # fs/jbd2 and fs/ext4/ext4_jbd2.c: the journal failed; fs/xfs: a forced shutdown
        (
            "JBD2: Detected IO errors while flushing file data on nvme0n1p1-8",
            ("local_fs_error", CRASH, HW, EXCLUDE),
        ),
        ("Aborting journal on device nvme0n1p1-8.", ("local_fs_error", CRASH, HW, EXCLUDE)),
        ("EXT4-fs (nvme0n1p1): Detected aborted journal", ("local_fs_error", CRASH, HW, EXCLUDE)),
        (
            "XFS (sda1): xfs_do_force_shutdown(0x2) called from line 1196 of file fs/xfs/xfs_log.c. "
            "Return address = 0xffffffffc0a1b2c3",
            ("local_fs_error", CRASH, HW, EXCLUDE),
        ),
        # net/sunrpc/clnt.c names the RPC program: lockd as well as nfs
        ("lockd: server storage01 not responding, still trying", ("nfs_not_responding", HANG, INFRA, SAME)),
        # kernel/hung_task.c and kernel/watchdog.c with *_panic set: the node panics
        ("Kernel panic - not syncing: hung_task: blocked tasks", ("kernel_hung_task", HANG, SYS, EXCLUDE)),
        ("Kernel panic - not syncing: softlockup: hung tasks", ("kernel_hung_task", HANG, SYS, EXCLUDE)),
        ("Kernel panic - not syncing: Hard LOCKUP", ("kernel_hung_task", HANG, SYS, EXCLUDE)),
        # mm/oom_kill.c
        (
            "Kernel panic - not syncing: Out of memory and no killable processes...",
            ("host_oom_killer", CRASH, APP, STOP),
        ),
        # the OOM killer's wording before linux 4.19
        (
            "Out of memory: Kill process 12345 (python3) score 951 or sacrifice child",
            ("host_oom_killer", CRASH, APP, STOP),
        ),
        # a kernel-mode oops (arch/x86/kernel/traps.c) and the panic after it
        (
            "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP NOPTI",
            ("generic_kernel_error", CRASH, SYS, SAME),
        ),
        ("Kernel panic - not syncing: Fatal exception", ("generic_kernel_error", CRASH, SYS, SAME)),
    ],
)
def test_the_kernels_fatal_printk_formats_are_read_by_their_cause(tmp_path, line, expected):
    assert answer(tmp_path, f"Dec  1 02:00:01 gpu7 kernel: {line}\n") == expected


def test_two_block_layer_errors_in_the_61_format_are_a_failing_disk(tmp_path):
    line = "Dec  1 02:00:01 gpu7 kernel: I/O error, dev nvme0n1, sector {} op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0\n"
    assert kind_of(tmp_path, line.format(12345)) is NONE  # one error is retried by the layer above
    assert answer(tmp_path, line.format(12345) + line.format(12353)) == ("storage_block_io_error", CRASH, HW, EXCLUDE)


def test_two_nvme_media_errors_are_a_failing_disk_and_a_command_error_is_not(tmp_path):
    media = "Dec  1 02:00:01 gpu7 kernel: nvme0n1: Read(0x2) @ LBA {}, 8 blocks, Unrecovered Read Error (sct 0x2 / sc 0x81) DNR\n"
    assert answer(tmp_path, media.format(1234) + media.format(1242)) == ("storage_block_io_error", CRASH, HW, EXCLUDE)
    command = "Dec  1 02:00:01 gpu7 kernel: nvme0n1: Write(0x1) @ LBA {}, 8 blocks, Invalid Field in Command (sct 0x0 / sc 0x2) DNR\n"
    assert kind_of(tmp_path, command.format(1234) + command.format(1242)) is NONE


def test_two_scsi_medium_errors_are_a_failing_disk(tmp_path):
    log = (
        "Dec  1 02:00:01 gpu7 kernel: sd 0:0:0:0: [sda] tag#12 Sense Key : Medium Error [current]\n"
        "Dec  1 02:00:01 gpu7 kernel: sd 0:0:0:0: [sda] tag#12 Add. Sense: Unrecovered read error - auto reallocate failed\n"
    )
    assert answer(tmp_path, log) == ("storage_block_io_error", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        "lockd: server storage01 OK",
        "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x12345 offset:0x0 "
        "grain:32 syndrome:0x0)",
        "nvidia 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "nvme nvme0: I/O 123 QID 4 timeout, aborting",
        "nfs: server storage01 OK",
        "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:",
        "NMI watchdog: Watchdog detected hard LOCKUP on cpu 5",
        "Memory failure: 0x1a2b3: recovery action for clean LRU page: Recovered",
        "traps: bash[4242] general protection fault ip:7f00 sp:7ffd error:0 in libc.so.6[7f00+1000]",
    ],
)
def test_corrected_errors_retried_timeouts_stall_reports_and_recovered_pages_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, f"Dec  1 02:00:01 gpu7 kernel: {line}\n") is NONE
