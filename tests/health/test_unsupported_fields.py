"""NVML calls a GPU or driver cannot answer degrade that one field to unknown; the read goes on."""

from lazarus.health.models import Verdict
from tests.health.helpers import gpu_value, scrape


def test_not_supported_calls_become_unknown_fields_with_the_reason(agent, gpus):
    gpus.unsupported("*", "nvmlDeviceGetRemappedRows")
    gpus.unsupported("*", "nvmlDeviceGetTotalEccErrors")
    gpus.unsupported(1, "nvmlDeviceGetCurrentClocksEventReasons")
    health = agent.poll()
    gpu0, gpu1 = health.gpus
    assert gpu0.row_remap.failure is None and gpu0.ecc.dbe_volatile is None
    assert gpu0.unknown_fields["row_remap"] == "Not Supported"
    assert gpu0.unknown_fields["ecc.dbe_volatile"] == "Not Supported"
    assert gpu1.clock_event_reasons is None and gpu0.clock_event_reasons == 0
    assert health.verdict is Verdict.HEALTHY  # unknown never makes a node look worse


def test_unknown_fields_have_no_sample_and_are_listed_in_their_own_metric(agent, gpus):
    gpus.unsupported(0, "nvmlDeviceGetRemappedRows")
    agent.poll()
    metrics = scrape(agent)
    assert gpu_value(metrics, "DCGM_FI_DEV_ROW_REMAP_FAILURE", 0) is None
    assert gpu_value(metrics, "DCGM_FI_DEV_ROW_REMAP_FAILURE", 1) == 0.0
    unknown = {(labels["gpu"], labels["field"]) for labels, _ in metrics["lazarus_gpu_field_unknown"]}
    assert ("0", "row_remap") in unknown


def test_a_driver_without_the_recovery_action_field_leaves_it_unknown(agent, gpus):
    gpus.set("*", "recovery_action", -1)  # the fake then answers the field with NOT_SUPPORTED
    gpu = agent.poll().gpus[0]
    assert gpu.recovery_action is None
    assert gpu.unknown_fields["recovery_action"] == "Not Supported"


def test_an_old_driver_missing_a_function_degrades_instead_of_crashing(agent, gpus, monkeypatch):
    import pynvml

    # A symbol the library does not export reaches the agent as NVMLError_FunctionNotFound.
    monkeypatch.setattr(pynvml, "nvmlDeviceGetRetiredPagesPendingStatus",
                        lambda h: pynvml._nvmlCheckReturn(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND))  # fmt: skip
    gpu = agent.poll().gpus[0]
    assert gpu.retired_pages.pending is None
    assert gpu.unknown_fields["retired_pages.pending"] == "Function Not Found"


def test_a_gpu_missing_xid_event_support_says_so(make_agent, gpus):
    gpus.unsupported(1, "nvmlDeviceRegisterEvents")
    health = make_agent().poll()
    assert "xid_events" in health.gpus[1].unknown_fields
    assert "xid_events" not in health.gpus[0].unknown_fields
