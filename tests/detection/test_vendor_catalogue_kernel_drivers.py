"""Recognition from the Linux kernel's network-adapter and storage drivers, eleventh pass of issue 9: the printk,
dev_err, netdev_err, mlx5_core_err and ibdev_err formats of Debian bookworm's ``linux-source-6.1`` (6.1.176-1),
compared with trixie's ``linux-source-6.12`` (6.12.117-1), whose wording differs only in bnxt_re's firmware stall:
drivers/net/ethernet/mellanox/mlx5/core (health.c, cmd.c, events.c, main.c, en_main.c), drivers/infiniband/hw
(efa/efa_com.c, bnxt_re/qplib_rcfw.c, irdma/main.c and hw.c; ib_core, ib_uverbs and rdma_cm print no fault of a
running job), the Ethernet drivers' link messages (ice, i40e, ixgbe, igb, bnxt_en) and bonding/bond_main.c, the
block layer (block/blk-mq.c, fs/buffer.c), ext4, XFS, NFS (fs/nfs/nfs4state.c), md (raid1.c, raid5.c), dm-thin,
dm-mpath and the SMB client (fs/smb/client); and Lustre's ptlrpc import messages (lustre-release
lustre/ptlrpc/import.c, read through the code search). Each line is built from a format string, with the syslog
header the kernel's lines carry, not copied from a corpus excerpt. Every family also pins lines that must stay
"no failure": the recovery notices, the retries the drivers do by themselves, and periodic summaries.

The eighth pass read the kernel's MCE, AER, NVMe, hung-task and OOM formats and the first block-layer, ext4 and
XFS ones (test_vendor_catalogue_system_stack.py); this file does not repeat them."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, answer_of, diagnose_text, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
HW, INFRA, SYS = Category.HARDWARE, Category.INFRASTRUCTURE, Category.SYSTEM_SOFTWARE

KERNEL = "Dec  1 02:00:01 gpu7 kernel: "


def kernel_lines(*lines: str) -> str:
    return "".join(KERNEL + line + "\n" for line in lines)


# ------------------------------------------------------------------------------------- RDMA adapters (mlx5, efa, ...)

MLX5 = "mlx5_core 0000:3b:00.0: "


@pytest.mark.parametrize(
    "line",
    [
        # health.c poll_health(): the firmware's health counter stopped
        MLX5 + "poll_health:852:(pid 0): device's health compromised - reached miss count",
        # health.c mlx5_health_try_recover(): the recovery the driver tried failed
        MLX5 + "mlx5_health_try_recover:355:(pid 812): health recovery failed",
        MLX5 + "mlx5_health_try_recover:350:(pid 812): health recovery flow aborted, PCI reads still not working",
        # cmd.c: the firmware answered no command ("%s(0x%x) timeout. Will cause a leak of a command resource")
        MLX5 + "wait_func:1176:(pid 4242): CREATE_QP(0x500) timeout. Will cause a leak of a command resource",
        MLX5 + "cmd_work_handler:937:(pid 4242): cmd[3]: DESTROY_QP(0x501) Async, timeout. "
        "Will cause a leak of a command resource",
        # main.c, PCI error recovery: the channel failed for good, or the driver could not be reloaded
        MLX5 + "mlx5_pci_err_detected Device state = 2 pci_status: 0. Exit, result = 4, disconnect",
        MLX5 + "mlx5_pci_slot_reset Device state = 2 pci_status: 1. Exit, err = -110, result = 4, disconnect",
        MLX5 + "mlx5_pci_resume Device state = 2 health sensors: 0 pci_status: 1. Done, err = -5, device Failed",
        # efa_com.c: the EFA device answered no admin command
        "efa 0000:00:1d.0 efa_0: The device didn't send any completion for admin cmd CREATE_QP(1) status 1 "
        "(ctx 0x00000000a1b2c3d4, sq producer: 42, sq consumer: 41, cq consumer: 41)",
        "efa 0000:00:1d.0 efa_0: Wait for completion (polling) timeout",
        # bnxt_re qplib_rcfw.c: the RoCE firmware channel timed out ("cmdq[%#x]=%#x timedout (%d)msec")
        "bnxt_en 0000:41:00.0: cmdq[0x2c]=0x11 timedout (20000)msec",
        # and 6.12's wording of it
        "bnxt_en 0000:41:00.0: __wait_for_resp: FW STALL Detected. cmdq[0x2c]=0x11 waited (20480 > 20000) msec "
        "active 1 ",
        # irdma main.c: the PF reported a critical RDMA engine error and irdma resets the function
        "irdma 0000:af:00.0 irdma0: critical PE Error, GLPE_CRITERR=0x00011424",
        "irdma 0000:af:00.0 irdma0: HMC Error",
        "irdma 0000:af:00.0 irdma0: PE Push Error",
    ],
)
def test_an_rdma_adapter_whose_firmware_stops_answering_is_the_nodes_hardware(tmp_path, line):
    result = diagnose_text(tmp_path, kernel_lines(line))
    assert answer_of(result) == ("ib_nic_catastrophic", CRASH, HW, EXCLUDE)
    assert result.implicated_nodes == ["gpu7"]


@pytest.mark.parametrize(
    "line",
    [
        "irdma 0000:af:00.0 irdma0: fatal QP event: SQ in error but not flushed, qp: 17",
        "irdma 0000:af:00.0 irdma0: Flush QP[17] failed, SQ has more work",
    ],
)
def test_irdmas_catastrophic_queue_pair_events_are_a_queue_pair_failure(tmp_path, line):
    assert answer(tmp_path, kernel_lines(line)) == ("ib_qp_fatal", CRASH, SYS, SAME)


def test_the_mlx5_failures_caught_before_this_pass_still_are(tmp_path):
    for line in (
        MLX5 + "poll_health:836:(pid 0): Fatal error 1 detected",
        MLX5 + "mlx5_fw_fatal_reporter_err_work:713:(pid 812): Driver is in error state. Unloading",
        MLX5 + "port_module:258:(pid 0): Port module event[error]: module 0, Cable error, Bad or shorted cable/module",
    ):
        assert kind_of(tmp_path, kernel_lines(line)) is CRASH, line


@pytest.mark.parametrize(
    "line",
    [
        # the recovery at work: the health flow succeeded, the PCI handlers ask for a reset and then recover
        MLX5 + "health recovery succeeded",
        MLX5 + "mlx5_pci_err_detected Device state = 1 health sensors: 2 pci_status: 1. Enter, pci channel state = 2",
        MLX5 + "mlx5_pci_err_detected Device state = 2 pci_status: 0. Exit, result = 3, need reset",
        MLX5 + "mlx5_pci_resume Device state = 1 health sensors: 0 pci_status: 1. Done, err = 0, device recovered",
        # a command the firmware answered with a bad status is the caller's business (mlx5_cmd_out_err)
        MLX5 + "mlx5_cmd_out_err:803:(pid 4242): QUERY_VPORT_COUNTER(0x770) op_mod(0x0) failed, status bad "
        "parameter(0x3), syndrome (0x1c7f6b), err(-22)",
        # events.c: a module plugged in, and the mlx5 Ethernet port's carrier returning
        MLX5 + "Port module event: module 0, Cable plugged",
        "mlx5_core 0000:3b:00.0 eth0: Link up",
        # irdma's resource check is a warning it continues after
        "irdma 0000:af:00.0 irdma0: Q1 Resource Check",
        # an admin command the EFA device answered with an error status goes back to the caller as an errno
        "efa 0000:00:1d.0 efa_0: Failed to process command CREATE_QP (opcode 1) comp_status 7 err -12",
    ],
)
def test_rdma_adapter_recoveries_and_answered_commands_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, kernel_lines(line)) is NONE


# --------------------------------------------------------------------------------------------------- Ethernet links


def test_a_bond_with_no_link_left_cuts_the_node_off(tmp_path):
    result = diagnose_text(tmp_path, kernel_lines("bond0: now running without any active interface!"))
    assert answer_of(result) == ("bond_no_active_interface", CRASH, INFRA, EXCLUDE)
    assert result.implicated_nodes == ["gpu7"]


@pytest.mark.parametrize(
    "line",
    [
        "ice 0000:17:00.0 ens2f0: NIC Link is Down",
        "ixgbe 0000:01:00.0 eno1: NIC Link is Down",
        "igb 0000:02:00.0 eno2: igb: eno2 NIC Link is Down",
        "bnxt_en 0000:41:00.0 ens1f0np0: NIC Link is Down",
        "mlx5_core 0000:3b:00.0 eth0: Link down",
        "bond0: (slave ens1f0): link status definitely down, disabling slave",
    ],
)
def test_a_port_that_loses_its_link_is_a_note_the_drivers_bring_it_back(tmp_path, line):
    result = diagnose_text(tmp_path, kernel_lines(line))
    assert result.failure_kind is NONE
    assert any("nic_link_down" in note for note in result.notes), result.notes


@pytest.mark.parametrize(
    "line",
    [
        "ice 0000:17:00.0 ens2f0: NIC Link is up 100 Gbps Full Duplex, Requested FEC: RS-FEC, Negotiated FEC: "
        "RS-FEC, Autoneg Advertised: On, Autoneg Negotiated: False, Flow Control: None",
        "bnxt_en 0000:41:00.0 ens1f0np0: NIC Link is Up, 100000 Mbps full duplex, Flow control: none",
        "bond0: (slave ens1f0): link status down for interface, disabling it in 200 ms",
        "bond0: (slave ens1f1): making interface the new active one",
        "bond0: (slave ens1f0): link status definitely up, 100000 Mbps full duplex",
        # net/sched/sch_generic.c dev_watchdog() (netdev_crit): the driver resets the queue by itself
        "bnxt_en 0000:41:00.0 ens1f0np0: NETDEV WATCHDOG: CPU: 12: transmit queue 3 timed out 5012 ms",
        "bnxt_en 0000:41:00.0 ens1f0np0: TX timeout detected, starting reset task!",
    ],
)
def test_link_recoveries_failovers_and_queue_resets_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, kernel_lines(line)) is NONE


# ---------------------------------------------------------------------------------------- block layer, ext4, XFS, md


def test_two_critical_medium_errors_in_the_61_format_are_a_failing_disk(tmp_path):
    line = "critical medium error, dev sdb, sector {} op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"
    assert kind_of(tmp_path, kernel_lines(line.format(123456))) is NONE  # one error is retried by the layer above
    log = kernel_lines(line.format(123456), line.format(123464))
    assert answer(tmp_path, log) == ("storage_block_io_error", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        # fs/xfs/xfs_error.c: a verifier or a check found corrupt metadata, and XFS asks for a repair
        "XFS (sda1): Metadata corruption detected at xfs_inode_buf_verify+0x14d/0x160 [xfs], xfs_inode block 0x1234 "
        "xfs_inode_buf_verify",
        "XFS (sda1): Internal error XFS_WANT_CORRUPTED_GOTO at line 1234 of file fs/xfs/libxfs/xfs_alloc.c.  "
        "Caller xfs_free_ag_extent+0x3e9/0x7a0 [xfs]",
        "XFS (sda1): Unmount and run xfs_repair",
        # fs/xfs/xfs_fsops.c xfs_do_force_shutdown(): "%s (0x%x) detected at %pS (%s:%d).  Shutting down filesystem."
        "XFS (sda1): Metadata I/O Error (0x1) detected at xfs_buf_ioend_fail+0x4a/0x50 [xfs] (fs/xfs/xfs_buf.c:1289).  "
        "Shutting down filesystem.",
        # fs/ext4/page-io.c: written data could not be recorded
        "EXT4-fs (sda1): failed to convert unwritten extents to written extents -- potential data loss!  "
        "(inode 1234, error -5)",
        # drivers/md/raid5.c: the array lost more members than its redundancy
        "md/raid:md0: Cannot continue operation (2/4 failed).",
    ],
)
def test_local_file_system_corruption_and_a_failed_raid_array_are_the_nodes_disk(tmp_path, line):
    assert answer(tmp_path, kernel_lines(line)) == ("local_fs_error", CRASH, HW, EXCLUDE)


@pytest.mark.parametrize(
    "line",
    [
        # fs/ext4/super.c print_daily_error_info(): a daily summary of errors already reported
        "EXT4-fs (sda1): error count since last fsck: 5",
        "EXT4-fs (sda1): initial error at time 1700000000: ext4_find_entry:1658: inode 2",
        "EXT4-fs (sda1): last error at time 1700000500: ext4_find_entry:1658: inode 2",
        "EXT4-fs (sda1): mounted filesystem with ordered data mode. Quota mode: none.",
        "EXT4-fs warning (device sda1): ext4_dx_add_entry:2554: Directory (ino: 1234) index full, reach max htree "
        "level :2",
        # fs/xfs/xfs_buf_item.c: XFS retries the write by itself
        "XFS (sda1): Failing async write on buffer block 0x1234. Retrying async write.",
        "XFS (sda1): Ending clean mount",
        # md: one disk failed and the array goes on degraded
        "md/raid1:md0: Disk failure on nvme1n1, disabling device.",
        "md/raid1:md0: Operation continuing on 1 devices.",
        "md/raid:md0: Disk failure on sdc, disabling device.",
        "md/raid:md0: Operation continuing on 3 devices.",
        "md/raid:md0: Too many read errors, failing device sdc.",
        # dm-mpath: one path of several failed; dm-thin waits for the pool to grow
        "device-mapper: multipath: 253:2: Failing path 8:32.",
        "device-mapper: thin: 253:3: switching pool to out-of-data-space (queue IO) mode",
        # the SCSI disk's command summary around a sense report says nothing by itself
        "sd 0:0:0:0: [sda] tag#12 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age=3s",
    ],
)
def test_periodic_summaries_retried_writes_and_a_degraded_array_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, kernel_lines(line)) is NONE


def test_a_thin_pool_that_errors_writes_when_full_is_no_space(tmp_path):
    line = "device-mapper: thin: 253:3: switching pool to out-of-data-space (error IO) mode"
    assert answer(tmp_path, kernel_lines(line)) == ("storage_no_space", CRASH, INFRA, STOP)


# ------------------------------------------------------------------------------------- network file systems


@pytest.mark.parametrize(
    "line",
    [
        # fs/nfs/nfs4state.c: the client could not reclaim its state after the server forgot it
        "NFSv4: state recovery failed for open file data/shard-00042.bin, error = -5",
        "NFS: storage01: lost 2 locks",
        "NFS: state manager: lease expired failed on NFSv4 server storage01 with error 110",
    ],
)
def test_nfsv4_state_the_server_forgot_is_the_file_servers_trouble_not_the_nodes(tmp_path, line):
    result = diagnose_text(tmp_path, kernel_lines(line))
    assert answer_of(result) == ("nfs4_state_lost", CRASH, INFRA, SAME)
    assert result.implicated_nodes == []


def test_an_smb_mount_that_fails_is_a_failed_mount(tmp_path):
    line = "CIFS: VFS: cifs_mount failed w/return code = -13"
    assert answer(tmp_path, kernel_lines(line)) == ("nfs_mount_failed", CRASH, INFRA, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "nfs: server storage01 OK",
        # lustre/ptlrpc/import.c: a replayable import waits for recovery, and the connection comes back
        "Lustre: scratch-OST0004-osc-ffff9a: Connection to scratch-OST0004 (at 10.0.0.4@o2ib) was lost; in progress "
        "operations using this service will wait for recovery to complete",
        "Lustre: scratch-OST0004-osc-ffff9a: Connection restored to scratch-OST0004 (at 10.0.0.4@o2ib)",
        # the non-replayable MGC import's loss is a LustreError line: a note of lustre_client_error
        "LustreError: 166-1: MGC10.0.0.1@o2ib: Connection to MGS (at 10.0.0.1@o2ib) was lost; in progress operations "
        "using this service will fail",
    ],
)
def test_file_server_recoveries_and_reconnects_are_no_failure(tmp_path, line):
    assert kind_of(tmp_path, kernel_lines(line)) is NONE


def test_a_remote_file_servers_trouble_never_names_the_node(tmp_path):
    log = kernel_lines(
        "nfs: server storage01 not responding, still trying",
        "CIFS: VFS: \\\\storage01 has not responded in 180 seconds. Reconnecting...",
    )
    result = diagnose_text(tmp_path, log)
    assert (result.category, result.retry_advice, result.implicated_nodes) == (INFRA, SAME, [])


# ------------------------------------------------------------------------------------------------------ prefilter

PREFILTER_STOPS_BEFORE_THIS_PASS = set("\"'()*-/:_")  # first characters of keywords already in the catalogue
NEW_KEYWORDS = {
    "ib_nic_catastrophic": [
        "'s health compromised",
        ": health recovery f",
        "Will cause a leak of a command resource",
        "Device state = ",
        "The device didn't send any completion for admin cmd",
        "Wait for completion (polling) timeout",
        ")msec",
        "GLPE_CRITERR=",
        "HMC Error",
        "PE Push Error",
        "FW STALL Detected",
    ],
    "ib_qp_fatal": ["SQ in error but not flushed", "Flush QP["],
    "bond_no_active_interface": [": now running without any active interface!"],
    "nic_link_down": ["NIC Link is Down", "): link status definitely down", "Link down"],
    "storage_block_io_error": ["(READ) flags ", "(WRITE) flags "],
    "local_fs_error": ["EXT4-fs (", "Cannot continue operation ("],
    "storage_no_space": ["(error IO) mode"],
    "nfs_mount_failed": ["CIFS: VFS: "],
    "nfs4_state_lost": ["NFSv4: state recovery failed for open file", "NFS: "],
}


@pytest.mark.parametrize(("signature_id", "keywords"), sorted(NEW_KEYWORDS.items()))
def test_this_passs_keywords_start_with_a_capital_or_a_character_the_prefilter_already_stopped_at(
    signature_id, keywords
):
    """A keyword starting with a new lower-case letter makes the prefilter stop at many positions of healthy lines
    (docs/adding-a-signature.md). The kernel's messages often hold no capital at all ("device's health
    compromised", "bond0: now running without any active interface!"), so their keywords start with the
    punctuation the prefilter stopped at already."""
    assert set(keywords) <= set(default_catalogue().get(signature_id).keywords)
    assert all(k[0].isupper() or k[0] in PREFILTER_STOPS_BEFORE_THIS_PASS for k in keywords), keywords
    assert not any(k[0].islower() for k in keywords), keywords
