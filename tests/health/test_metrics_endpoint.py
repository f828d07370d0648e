"""`lazarus node-agent` serves the DCGM-named metrics over HTTP and picks up new Xids on its next poll."""

import signal
import socket
import time
import urllib.request

import pytest

from tests.health.helpers import AGENT_PORTS, free_port, gpu_value, parse_metrics, run_cli


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.read().decode()
    except OSError:
        return None


def _wait_for(url: str, predicate, timeout: float = 15.0) -> dict:
    """Scrape until ``predicate(metrics)`` holds; the agent may have polled before the script changed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = _get(url)
        metrics = parse_metrics(body) if body else {}
        if metrics and predicate(metrics):
            return metrics
        time.sleep(0.1)
    pytest.fail(f"{url} never served what the test waited for; last body: {body!r}")


def _node_health(metrics: dict) -> float | None:
    return next((v for labels, v in metrics.get("lazarus_node_health", []) if labels["Hostname"] == "gpu-node-9"), None)


def test_the_endpoint_serves_dcgm_names_with_dcgm_labels(served_agent, gpus):
    gpus.set(1, "ecc_dbe_vol", 2)
    _, port = served_agent
    url = f"http://127.0.0.1:{port}/metrics"
    metrics = _wait_for(url, lambda m: gpu_value(m, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1) == 2.0)
    labels, _ = next(s for s in metrics["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] if s[0]["gpu"] == "1")
    assert labels == {
        "gpu": "1", "UUID": "GPU-fake-0001", "Hostname": "gpu-node-9", "modelName": "NVIDIA H100 80GB HBM3"
    }  # fmt: skip
    for name in ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_RETIRED_DBE",
                 "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"):  # fmt: skip
        assert gpu_value(metrics, name, 0) == 0.0
    assert _node_health(metrics) == 2.0


def test_a_new_xid_shows_on_the_endpoint_and_sigterm_stops_the_agent(served_agent, gpus):
    proc, port = served_agent
    url = f"http://127.0.0.1:{port}/metrics"
    _wait_for(url, lambda m: _node_health(m) == 0.0)
    gpus.xid(0, 79)
    metrics = _wait_for(url, lambda m: _node_health(m) == 2.0)
    assert gpu_value(metrics, "DCGM_FI_DEV_XID_ERRORS", 0) == 79.0
    assert metrics["lazarus_xid_events_total"] == [
        ({"gpu": "0", "UUID": "GPU-fake-0000", "Hostname": "gpu-node-9", "xid": "79"}, 1.0)
    ]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0


def test_a_taken_port_is_one_clear_error(gpus, fake_nvml_dir):
    port = free_port(AGENT_PORTS)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        env = {"LD_LIBRARY_PATH": str(fake_nvml_dir), **gpus.env()}
        result = run_cli(["node-agent", "--port", str(port), "--address", "127.0.0.1"], env=env)
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Traceback" not in result.stderr
