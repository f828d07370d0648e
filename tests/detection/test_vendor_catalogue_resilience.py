"""Recognition from the training stacks' own health messages, tenth pass of issue 9: the strings that
nvidia-resiliency-ext 0.4.1 (its straggler detection callback, the fault-tolerance rank monitor, rendezvous health
check and launcher, the in-process restart wrapper), megatron-core 0.16.1 (the rerun state machine's result
validation, the straggler detector's summary) and mosaicml 0.32.1 (composer's NaNMonitor) print. Each line here is
built from a format string of the wheel, not copied from a corpus excerpt. Every family also pins lines that must
stay "no failure": the software prints them as periodic summaries, reruns by itself, or only warns."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, HANG, NONE, STRAGGLER = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE, FailureKind.STRAGGLER
STOP, SAME, EXCLUDE = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES, RetryAdvice.RETRY_EXCLUDING_NODES
APP, HARDWARE, UNKNOWN = Category.APPLICATION, Category.HARDWARE, Category.UNKNOWN

NEMO_W = "[NeMo W 2026-12-01 05:00:00 straggler_det_callback:117] "
MONITOR = "[WARNING] [RankMonitorServer:3] "
MEGATRON = "Rank 3, node gpu-node-07, device 3, iteration #1200: "


# ------------------------------------------------------ straggler detection (nvidia-resiliency-ext, NeMo callback)


@pytest.mark.parametrize(
    "line",
    [
        NEMO_W + "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. "
        "Affected ranks: {StragglerId(rank=5, node='gpu-node-17')}",
        NEMO_W + "STRAGGLER DETECTION WARNING: Some GPUs performance dropped. "
        "Affected ranks: {StragglerId(rank=5, node='gpu-node-17')}",
    ],
)
def test_a_straggler_report_naming_a_rank_and_node_is_a_hardware_straggler_on_that_node(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.failure_kind, result.category) == (
        "straggler_detector_report",
        STRAGGLER,
        HARDWARE,
    )
    assert result.implicated_nodes == ["gpu-node-17"]


def test_the_callback_ending_the_job_on_stragglers_is_a_straggler(tmp_path):
    line = "[NeMo E 2026-12-01 05:00:00 straggler_det_callback:249] Detected stragglers. Terminating training..."
    assert kind_of(tmp_path, line) is STRAGGLER


@pytest.mark.parametrize(
    "line",
    [
        # the callback's periodic score table and its timing note
        "  Rank=5 Node=gpu-node-17 Score=0.71",
        "[NeMo I 2026-12-01 05:00:00 straggler_det_callback:246] Straggler report processing time: 0.012 sec.",
        # megatron-core utils.py StragglerDetector: the periodic min/max summary on rank 0 and its controller
        "[2026-12-01 05:00:00] | MnRtt/Rnk: 3012.11ms/5 | MxRtt/Rnk: 3300.02ms/2 | MnPwr/Rnk: 400000.00W/1 | "
        "MxPwr/Rnk: 700000.00W/3 | MnTmp/Rnk: 40.00C/1 | MxTmp/Rnk: 70.00C/3 | MnUtl/Rnk: 99.00%/1 | "
        "MxUtl/Rnk: 100.00%/2 | MnClk/Rnk: 1980.00MHz/1 | MxClk/Rnk: 1980.00MHz/1 | MnDRtt/Rnk: 0.31ms/1 | "
        "MxDRtt/Rnk: 0.81ms/3 | MnEtpt/Rnk: 402.12TF/5 | MxEtpt/Rnk: 431.55TF/0",
        "Toggling StragglerDetector State True",
    ],
)
def test_the_straggler_detectors_periodic_summaries_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# -------------------------------------------------------------- result validation (megatron rerun state machine)


def test_a_fatal_unexpected_result_with_the_rerun_machine_disabled_is_the_applications_divergence(tmp_path):
    line = (
        "RuntimeError: Rank 3, node gpu-node-07, device 3, iteration 1200: "
        "Unexpected result tensor(nan, device='cuda:3') (message='loss is NaN')"
    )
    assert answer(tmp_path, line + "\n") == ("megatron_rerun_unexpected_result", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        MEGATRON + "Possible transient error!",
        MEGATRON + "First rerun: unexpected result is reproducible within the tolerance (tensor(nan) = tensor(nan)). "
        "Need to rerun on a different GPU to verify correctness.!",
        "Got rescheduled on the same GPU. Need to resume again from the same checkpoint (node: gpu-node-07, gpu: 3)",
    ],
)
def test_a_rerun_that_suspects_the_gpu_excludes_the_node_it_names(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.category, result.retry_advice) == (
        "megatron_rerun_suspects_gpu",
        HARDWARE,
        EXCLUDE,
    )
    assert result.implicated_nodes == ["gpu-node-07"]


@pytest.mark.parametrize(
    "line",
    [
        "Rank 0, node gpu-node-02, device 0, iteration #1200: Possible persistent error!",
        "Saving a checkpoint and exiting now. Please resume the job from the checkpoint to rerun the last iteration "
        "and establish a diagnostic",
        "Exiting now. A checkpoint at the last iteration is being saved if further examination is needed",
    ],
)
def test_an_exit_to_rerun_elsewhere_or_a_persistent_error_is_hardware_without_blaming_the_healthy_rank(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.category) == ("megatron_rerun_exit_for_diagnosis", HARDWARE)
    assert result.implicated_nodes == []


def test_a_result_reproduced_on_a_different_gpu_is_the_applications_error(tmp_path):
    line = "Rank 0, node gpu-node-02, device 0, iteration #1200: Correct result (but possible Application error) (loss is NaN)!"
    assert answer(tmp_path, line + "\n") == ("megatron_rerun_application_error", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        # the initial detection, which the machine reruns by itself
        "Unexpected result tensor(nan, device='cuda:3') on rank 3 at iteration #1200 invocation #1 (message='loss is NaN')",
        # a non-fatal check only warns and training goes on
        "[WARNING | megatron.core.rerun_state_machine]: Rank 3, node gpu-node-07, device 3, iteration 1200: "
        "Unexpected result tensor(81.5, device='cuda:3') (message='Spiky loss')",
        "Need to rerun step to check reproducibility of initial result",
        "Result validation enabled",
        "Second rerun: unexpected result is reproducible on a different GPU, therefore it was likely correct "
        "(tensor(nan) = tensor(nan))",
    ],
)
def test_the_rerun_machines_own_reruns_and_warnings_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------ NaN monitors (mosaicml composer)


@pytest.mark.parametrize(
    "line", ["RuntimeError: Train loss contains a NaN.", "RuntimeError: Train loss ce contains a NaN."]
)
def test_composers_nan_monitor_is_the_training_stopping_itself_on_a_nan_loss(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("nan_loss_abort", CRASH, APP, STOP)


def test_composers_oom_observer_registering_itself_stays_no_failure(tmp_path):
    # mosaicml 0.32.1 composer/callbacks/oom_observer.py, at startup
    assert kind_of(tmp_path, "INFO:composer.callbacks.oom_observer:OOMObserver is enabled and registered") is NONE


# ----------------------------------------------- fault tolerance (nvidia-resiliency-ext rank monitor, rendezvous)


@pytest.mark.parametrize(
    "line",
    [
        MONITOR + "Did not get subsequent heartbeat. Waited 600.00 seconds.",
        MONITOR + "Did not get initial heartbeat. Waited 1800.00 seconds.",
        MONITOR + "Section 'step' has been open for 612.34 seconds. Timeout is 600.00 seconds.",
        MONITOR + "Was out of section for 612.34 seconds. Timeout is 600.00 seconds.",
        MONITOR + "FT timeout elapsed.",
    ],
)
def test_the_rank_monitors_missed_heartbeat_or_section_timeout_is_a_hang(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("ft_rank_monitor_timeout", HANG, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "nvidia_resiliency_ext.fault_tolerance._ft_rendezvous.UnhealthyNodeException: Node gpu-node-07 has an unhealthy GPU.",
        "[ERROR] Health check failed for node gpu-node-07: Node gpu-node-07 has an unhealthy GPU.",
    ],
)
def test_the_rendezvous_health_check_names_the_node_with_an_unhealthy_gpu(tmp_path, line):
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.signature, result.category, result.retry_advice) == ("ft_unhealthy_node", HARDWARE, EXCLUDE)
    assert result.implicated_nodes == ["gpu-node-07"]


def test_the_ft_launchers_summary_of_failed_ranks_is_a_victim_crash(tmp_path):
    line = (
        "[ERROR] Some rank(s) exited with non-zero exit code: {0: ProcessFailure(local_rank=0, pid=1234, exitcode=1)}. "
        "Agent's exit code = 1"
    )
    assert answer(tmp_path, line + "\n") == ("elastic_child_failed", CRASH, UNKNOWN, SAME)


def test_the_in_process_restarts_giving_up_on_a_rank_is_a_crash(tmp_path):
    line = "nvidia_resiliency_ext.inprocess.health_check.FaultCounterExceeded: faults_count=4 / max_rank_faults=3"
    assert answer(tmp_path, line + "\n") == ("inprocess_fault_counter_exceeded", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "[INFO] Checking health status of gpu-node-07.",
        "[WARNING] [RankMonitorServer:3] Section(s) ['step'] were still open. you can use`.end_all_sections` to "
        "avoid this warning",
        "[INFO] [RankMonitorServer:3] Started periodic restart check.",
        "[INFO] [RankMonitorServer:3] Received request from launcher to close worker IPC connection",
    ],
)
def test_the_fault_tolerance_packages_health_checks_and_timeout_updates_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------ NeMo's preemption callback and timers, Lightning's Timer


def test_nemos_preemption_callback_exiting_on_sigterm_is_the_external_signal_whoever_sent_it(tmp_path):
    # nemo_toolkit 3.0.0 nemo/utils/callbacks/preemption.py: saves a checkpoint and exits 0 on any SIGTERM
    line = "[NeMo I 2026-12-01 05:00:00 preemption:99] Received SIGTERM, saving checkpoint and exiting"
    assert answer(tmp_path, line + "\n") == ("generic_external_signal", CRASH, UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        # lightning 2.6.6 lightning/pytorch/callbacks/timer.py: the max_time the user set, a normal end
        "Time limit reached. Elapsed time is 1 day, 0:00:00. Signaling Trainer to stop.",
        # nemo_toolkit 3.0.0 nemo/utils/exp_manager.py: the step timers
        "[NeMo I 2026-12-01 05:00:00 exp_manager:451] Step 1200: train_step_timing in s=1.234",
        "[NeMo W 2026-12-01 05:00:00 exp_manager:338] Missing timer 'train_step_timing' in exp_manager's "
        "_on_batch_end callback - not logging.",
    ],
)
def test_the_trainers_own_time_limit_and_step_timers_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE
