"""Recognition of how a job was launched and who ended it, eleventh pass of issue 9: the strings that the
launchers, schedulers and MPI libraries print, read from their packages, not from corpus excerpts.

Artefacts read (Debian trixie packages unless said otherwise, `apt-get download`, `dpkg-deb -x`, `strings -n 8`):
Slurm 24.11.5-4+deb13u1 (`slurm-client`: srun, sbatch, salloc; `slurmd`: slurmd, slurmstepd; `slurmctld`;
`slurm-wlm-basic-plugins` and `libslurm42t64`: libslurmfull.so, libslurm.so.42, the plugins), compared with the
installed 22.05.8; MPICH 4.3.0+really4.2.1-1 (`mpich`: mpiexec.hydra and hydra_pmi_proxy; `libmpich12`:
libmpich.so.12's error-class texts); Open MPI 5.0.7-1 (`openmpi-common`, `libopenmpi40`) with PRRTE 3.0.8
(`/usr/share/prte/help-*.txt`, libprrte.so.3); submitit 1.5.4 and torchx 0.7.0 (PyPI wheels, their Python
sources); the kubelet's and the Job controller's reason messages (Kubernetes pkg/kubelet/eviction/helpers.go,
the active-deadline handler); pyxis's messages (NVIDIA/pyxis pyxis_slurmstepd.c) and Apptainer's "container
creation failed". Each line here is built from a format string of the binary, the help text or the source, with
the header the program puts in front of it. Every family also pins lines that must stay "no failure": notices,
what the software does by itself, exit statuses that say nothing of the cause."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
APP, INFRA, UNKNOWN = Category.APPLICATION, Category.INFRASTRUCTURE, Category.UNKNOWN

STAMP = "[2026-12-01T05:00:01.123] "
SACCT = "4242         train        gpu    acct1         16 {state:>10}      0:0"
MAIL = "Slurm Job_id=4242 Name=train {verb}, Run time 01:02:03, {state}, ExitCode 0"
SUBMITIT = (
    "submitit.core.utils.UncompletedJobError: Job 4242 (task: 0) with path /ckpt/4242_0_result.pkl\n"
    "has not produced any output (state: {state})"
)
SUBMITIT_LOG = "submitit {level} (2026-12-01 05:00:01,123) - {message}"


# --------------------------------------------------------------------- Slurm 24.11.5: job states, who ended it


@pytest.mark.parametrize(
    "line",
    [
        "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)",
        SACCT.format(state="TIMEOUT"),
        MAIL.format(verb="Ended", state="TIMEOUT"),
        SUBMITIT.format(state="TIMEOUT"),
        SUBMITIT_LOG.format(level="WARNING", message="Caught signal SIGUSR2 on node07: this job is timed-out."),
        "submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out and not checkpointable.",
        "slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT 2026-12-01T05:00:01 DUE TO TIME LIMIT ***",
        STAMP + "Time limit exhausted for JobId=4242",
    ],
)
def test_the_time_limit_in_every_form_slurm_and_submitit_print_it_is_retried_on_the_same_nodes(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("slurm_time_limit", CRASH, INFRA, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "Normal   DeadlineExceeded  pod/train-0  Pod was active on the node longer than the specified deadline",
        "Warning  DeadlineExceeded  job/train  Job was active longer than specified deadline",
    ],
)
def test_a_kubernetes_active_deadline_is_the_jobs_time_limit_not_a_fault(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("slurm_time_limit", CRASH, INFRA, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "   JobState=NODE_FAIL Reason=NodeDown Dependency=(null)",
        "   JobState=BOOT_FAIL Reason=NodeDown Dependency=(null)",
        SACCT.format(state="NODE_FAIL"),
        MAIL.format(verb="Failed", state="NODE_FAIL"),
        SUBMITIT.format(state="NODE_FAIL"),
        STAMP + "Requeue job JobId=4242 due to node failure",
        STAMP + "_job_requeue_op: requeue JobId=4242 due to node failure",
    ],
)
def test_a_node_failure_state_that_names_no_node_is_infrastructure_retried_without_blaming_a_node(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.failure_kind, result.category, result.retry_advice) == (
        "slurm_state_node_fail",
        CRASH,
        INFRA,
        SAME,
    )
    assert result.implicated_nodes == []


def test_the_node_failure_banner_that_names_the_node_outranks_the_bare_state(tmp_path):
    text = (
        SACCT.format(state="NODE_FAIL")
        + "\nslurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT 2026-12-01T05:00:01 DUE TO NODE FAILURE, SEE"
        " SLURMCTLD LOG FOR DETAILS ***\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "slurm_job_node_failure"
    assert result.implicated_nodes == ["node07"]
    assert result.retry_advice is EXCLUDE


@pytest.mark.parametrize(
    "line",
    [
        "slurmstepd: error: task 3 (12345) Out Of Memory (OOM)",
        "   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)",
        "4242         train        gpu    acct1         16 OUT_OF_MEMORY    0:125",
        MAIL.format(verb="Failed", state="OUT_OF_MEMORY"),
        SUBMITIT.format(state="OUT_OF_MEMORY"),
    ],
)
def test_slurms_out_of_memory_state_and_its_per_task_oom_line_are_the_jobs_host_memory(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("host_oom_invoked", CRASH, APP, STOP)


def test_the_24_11_cgroup_oom_event_wording_is_still_read(tmp_path):
    line = (
        "slurmstepd: error: Detected 2 oom_kill events in StepId=4242.0. Some of the step tasks have been OOM Killed."
    )
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "   JobState=PREEMPTED Reason=None Dependency=(null)",
        SACCT.format(state="PREEMPTED"),
        SUBMITIT.format(state="PREEMPTED"),
        SUBMITIT_LOG.format(level="WARNING", message="Caught signal SIGUSR2 on node07: this job is preempted."),
        "Warning  Preempting  pod/train-0  Preempted in order to admit critical pod",
        STAMP + "preempted JobId=4242 has been requeued to reclaim resources for JobId=4250",
        STAMP + "_job_preempt: preempted JobId=4242 had to be killed",
    ],
)
def test_a_preemption_in_slurm_submitit_or_kubelet_words_is_infrastructure_retried(tmp_path, line):
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, INFRA, SAME)


@pytest.mark.parametrize(
    "line",
    [
        STAMP + "error: _prolog_error: Job prolog failed",
        STAMP + "error: validate_node_specs: Prolog or job env setup failure on node node07, draining the node",
        STAMP + "Prolog/Epilog failure on nodes node07, setting DOWN",
    ],
)
def test_slurmctlds_prolog_failures_are_the_nodes_and_name_the_node_they_drain(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.category, result.retry_advice) == ("slurm_prolog_failed", INFRA, EXCLUDE)
    if "node07" in line:
        assert result.implicated_nodes == ["node07"]


def test_a_step_asked_for_in_an_allocation_that_already_ended_is_a_victim_not_a_refused_request(tmp_path):
    line = "srun: error: Unable to create step for job 4242: Job/step already completing or completed"
    result = diagnose_text(tmp_path, line + "\n")
    assert result.signature != "slurm_request_rejected"
    assert result.retry_advice is SAME


@pytest.mark.parametrize(
    "line",
    [
        SACCT.format(state="COMPLETED"),
        "4242.0         python        gpu    acct1         16  COMPLETED      0:0",
        MAIL.format(verb="Ended", state="COMPLETED"),
        "   JobState=PENDING Reason=BeginTime Dependency=(null) Requeue=1 Restarts=1",
        "   JobState=RUNNING Reason=None Dependency=(null)",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "srun: Force Terminated StepId=4242.0",
        "srun: Step created for StepId=4242.0",
        "srun: error: Stdout/err from task 3 may be incomplete due to a network error",
        "srun: error: node07: task 0: Exited with exit code 1",
        "error: [job 4242] epilog failed status=1:0",
        "slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT 2026-12-01T05:00:01 DUE TO JOB REQUEUE ***",
        SUBMITIT_LOG.format(level="INFO", message="Requeued job 4242 (3 remaining timeouts)"),
        SUBMITIT_LOG.format(level="INFO", message="Exiting gracefully after preemption/timeout."),
        "TIMEOUT=600 NCCL_TIMEOUT=1800 python train.py",
        "4242         train        gpu    acct1         16    RUNNING      0:0",
        STAMP + "preempted JobId=4242 suspended by gang scheduler to reclaim resources for JobId=4250",
        STAMP + "setting 120 sec preemption grace time for JobId=4242 to reclaim resources for JobId=4250",
        STAMP + "sched: Allocate JobId=4242 NodeList=node[01-04] #CPUs=64 Partition=gpu",
        STAMP + "_job_complete: JobId=4242 done",
    ],
)
def test_slurm_and_submitit_notices_states_and_exit_statuses_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ----------------------------------------------------------------------------- MPICH 4.2.1 (Hydra, libmpich)

BANNER = (
    "===================================================================================\n"
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
    "=   PID 12345 RUNNING AT node07\n"
    "=   EXIT CODE: {code}\n"
    "=   CLEANING UP REMAINING PROCESSES\n"
    "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n"
    "===================================================================================\n"
)


@pytest.mark.parametrize(
    ("exit_string", "expected"),
    [
        ("Killed (signal 9)", "process_killed_sigkill"),
        ("Aborted (signal 6)", "process_aborted"),
        ("Segmentation fault (signal 11)", "process_segfault"),
    ],
)
def test_hydras_exit_string_is_read_by_its_signal(tmp_path, exit_string, expected):
    text = BANNER.format(code=9) + f"YOUR APPLICATION TERMINATED WITH THE EXIT STRING: {exit_string}\n"
    assert answer(tmp_path, text)[0] == expected


@pytest.mark.parametrize(
    ("klass", "expected"),
    [
        ("Other MPI error", ("mpi_errors_are_fatal", CRASH, UNKNOWN, SAME)),
        ("Process failed", ("mpi_peer_disconnected", CRASH, UNKNOWN, SAME)),
        ("Communication error with rank 7", ("mpi_peer_disconnected", CRASH, UNKNOWN, SAME)),
        ("Message truncated", ("mpi_error_class", CRASH, APP, STOP)),
        ("Invalid rank", ("mpi_error_class", CRASH, APP, STOP)),
        ("Invalid communicator", ("mpi_error_class", CRASH, APP, STOP)),
        ("Invalid datatype", ("mpi_error_class", CRASH, APP, STOP)),
    ],
)
def test_mpichs_fatal_error_is_read_by_its_error_class(tmp_path, klass, expected):
    line = f"Abort(805951759) on node 3 (rank 3 in comm 0): Fatal error in internal_Allreduce: {klass}, error stack:"
    assert answer(tmp_path, line + "\nMPIR_Allreduce_impl(4825)...:\n") == expected


MPI4PY = (
    "Traceback (most recent call last):\n"
    '  File "/train.py", line 10, in <module>\n'
    "    comm.allreduce(x)\n"
    '  File "src/mpi4py/MPI.src/Comm.pyx", line 1947, in mpi4py.MPI.Comm.allreduce\n'
    "mpi4py.MPI.Exception: {text}\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Other MPI error, error stack:", ("mpi_errors_are_fatal", CRASH, UNKNOWN, SAME)),
        ("MPI_ERR_OTHER: known error not in list", ("mpi_errors_are_fatal", CRASH, UNKNOWN, SAME)),
        ("Process failed, error stack:", ("mpi_peer_disconnected", CRASH, UNKNOWN, SAME)),
        ("MPI_ERR_PROC_FAILED: Process Failure", ("mpi_peer_disconnected", CRASH, UNKNOWN, SAME)),
    ],
)
def test_mpi4pys_exception_is_read_by_the_mpi_error_class_it_carries(tmp_path, text, expected):
    assert answer(tmp_path, MPI4PY.format(text=text)) == expected


def test_mpi4pys_exception_for_the_callers_arguments_stays_the_programs_error(tmp_path):
    assert answer(tmp_path, MPI4PY.format(text="MPI_ERR_TRUNCATE: message truncated"))[1:] == (CRASH, APP, STOP)


def test_mpichs_mpi_abort_line_is_the_applications_own_stop(tmp_path):
    line = "Abort(1) on node 3 (rank 3 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3"
    assert answer(tmp_path, line + "\n")[0] == "mpi_abort_called"


@pytest.mark.parametrize(
    "text",
    [
        BANNER.format(code=1),
        "[mpiexec@node01] HYDT_bscu_wait_for_completion (lib/tools/bootstrap/utils/bscu_wait.c:76): one of the"
        " processes terminated badly; aborting",
        "[mpiexec@node01] HYD_pmci_wait_for_completion (mpiexec/pmiserv_pmci.c:218): launcher returned error waiting"
        " for completion",
        "[proxy:0:0@node07] launching process 12345 on node07",
    ],
)
def test_hydras_exit_code_banner_and_its_summaries_stay_no_failure(tmp_path, text):
    """An exit status says nothing of the cause (as mpirun's "terminated normally, but N process returned")."""
    assert kind_of(tmp_path, text) is NONE


# ------------------------------------------------------------------ Open MPI 5.0.7 / PRRTE 3.0.8 help texts


@pytest.mark.parametrize(
    ("signal", "expected"),
    [("9 (Killed)", "process_killed_sigkill"), ("6 (Aborted)", "process_aborted")],
)
def test_prrtes_wrapped_proc_aborted_text_is_read_by_its_signal(tmp_path, signal, expected):
    text = f"prterun noticed that process rank 3 with PID 12345 on node node07 exited on\nsignal {signal}.\n"
    assert answer(tmp_path, text)[0] == expected


def test_open_mpi_5s_mpi_abort_text_with_the_errorcode_on_its_own_line_is_the_applications_stop(tmp_path):
    text = (
        "--------------------------------------------------------------------------\n"
        "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\n"
        "  Proc: [[12345,1],3]\n"
        "  Errorcode: 1\n"
        "\n"
        "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
    )
    assert answer(tmp_path, text)[0] == "mpi_abort_called"


ERRORS = (
    "[node07:12345] *** An error occurred in MPI_Allreduce\n"
    "[node07:12345] *** reported by process [123456789,3]\n"
    "[node07:12345] *** on communicator MPI_COMM_WORLD\n"
    "[node07:12345] *** {klass}\n"
    "[node07:12345] *** {handler} (processes in this communicator will now abort,\n"
    "[node07:12345] ***    and potentially the rest of your MPI job)\n"
)


@pytest.mark.parametrize("handler", ["MPI_ERRORS_ARE_FATAL", "MPI_ERRORS_ABORT"])
def test_open_mpi_5s_fatal_handlers_read_the_error_class_before_them(tmp_path, handler):
    other = ERRORS.format(klass="MPI_ERR_OTHER: known error not in list", handler=handler)
    assert answer(tmp_path, other) == ("mpi_errors_are_fatal", CRASH, UNKNOWN, SAME)
    truncated = ERRORS.format(klass="MPI_ERR_TRUNCATE: message truncated", handler=handler)
    assert answer(tmp_path, truncated) == ("mpi_error_class", CRASH, APP, STOP)


def test_prrtes_failed_daemon_text_an_prte_daemon_is_a_lost_daemon(tmp_path):
    text = (
        "An PRTE daemon has unexpectedly failed after launch and before\n"
        "communicating back to mpirun. This could be caused by a number\n"
    )
    assert answer(tmp_path, text) == ("mpi_lost_daemon", CRASH, INFRA, SAME)


def test_prrtes_normal_termination_but_nonzero_status_stays_no_failure(tmp_path):
    text = (
        "prterun job 1234 terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    )
    assert kind_of(tmp_path, text) is NONE


# ------------------------------------------------------------------------------ Kubernetes (kubelet eviction)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the pod over its own local-storage limits: its quota, every retry writes as much
        (
            'Container train exceeded its local ephemeral storage limit "10Gi". ',
            ("storage_no_space", CRASH, INFRA, STOP),
        ),
        (
            "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
            ("storage_no_space", CRASH, INFRA, STOP),
        ),
        ('Usage of EmptyDir volume "dshm" exceeds the limit "8Gi". ', ("storage_no_space", CRASH, INFRA, STOP)),
        # the node's disk pressure: a retried eviction, as before
        (
            "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8Gi. ",
            ("pod_evicted", CRASH, INFRA, SAME),
        ),
        ("The node had condition: [DiskPressure]. ", ("pod_evicted", CRASH, INFRA, SAME)),
    ],
)
def test_an_eviction_for_the_pods_own_storage_limit_stops_and_one_for_the_nodes_disk_pressure_retries(
    tmp_path, message, expected
):
    assert answer(tmp_path, f"Warning  Evicted  pod/train-0  {message}\n") == expected


@pytest.mark.parametrize(
    "text",
    [
        "    State:          Terminated\n      Reason:       Completed\n      Exit Code:    0\n",
        "  Normal  Killing  pod/train-0  Stopping container train\n",
        "  Normal  Scheduled  pod/train-0  Successfully assigned default/train-0 to node07\n",
    ],
)
def test_a_pod_that_completed_or_was_stopped_stays_no_failure(tmp_path, text):
    assert kind_of(tmp_path, text) is NONE


# ------------------------------------------------------------------------ pyxis/enroot, Apptainer/Singularity


@pytest.mark.parametrize(
    "text",
    [
        "slurmstepd: error: pyxis: child 12455 failed with error code: 1\n"
        "slurmstepd: error: pyxis: failed to import docker image\n"
        "slurmstepd: error: pyxis: printing enroot log file:\n"
        "slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/proxy_auth returned error code: 401 Unauthorized\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n",
        "slurmstepd: error: pyxis: couldn't start container\n",
        "FATAL:   container creation failed: mount hook function failure: mount /project->/project error: while"
        " mounting /project: destination /project doesn't exist in container\n",
    ],
)
def test_a_container_the_hpc_launcher_could_not_start_is_a_crash_of_unknown_cause(tmp_path, text):
    assert answer(tmp_path, text) == ("container_start_failed", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.05-py3",
        "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.05-py3",
        "pyxis: creating container filesystem: pyxis_4242.0",
        "INFO:    Converting SIF file to temporary sandbox...",
        "WARNING: Skipping mount /etc/localtime [binds]: /etc/localtime doesn't exist in container",
    ],
)
def test_container_launcher_progress_and_warnings_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------------ keywords

LAUNCHER_SIGNATURES = ["slurm_state_node_fail", "container_start_failed", "slurm_output_may_be_incomplete"]


@pytest.mark.parametrize("signature_id", LAUNCHER_SIGNATURES)
def test_the_new_launcher_signatures_keywords_add_no_new_first_character_to_the_prefilter(signature_id):
    """New keywords start with a capital (docs/adding-a-signature.md); the two pyxis keywords start with Slurm's
    ": error: ", a prefix the prefilter already stops at (generic_scheduler_error)."""
    catalogue = default_catalogue()
    keywords = catalogue.get(signature_id).keywords
    assert ": error: " in catalogue.get("generic_scheduler_error").keywords
    assert all(k[0].isupper() or k.startswith(": error: ") for k in keywords), keywords
