"""`lazarus node-agent --once --json` prints exactly one NodeHealth snapshot."""

import json

from lazarus.health.models import NodeHealth, Verdict
from tests.health.helpers import run_cli


def _once(gpus, fake_nvml_dir, *extra, **env):
    env = {"LD_LIBRARY_PATH": str(fake_nvml_dir), **gpus.env(), **env}
    return run_cli(["node-agent", "--once", "--json", *extra], env=env)


def test_once_json_prints_a_snapshot_that_parses_back(gpus, fake_nvml_dir):
    gpus.xid(0, 79)
    result = _once(gpus, fake_nvml_dir, "--node", "gpu-node-7")
    assert result.returncode == 0, result.stderr
    health = NodeHealth.model_validate(json.loads(result.stdout))
    assert health.node == "gpu-node-7"
    assert health.verdict is Verdict.FAILED and health.xid_codes == [79]


def test_the_node_name_comes_from_slurm_when_not_given(gpus, fake_nvml_dir):
    result = _once(gpus, fake_nvml_dir, SLURMD_NODENAME="node-3")
    assert json.loads(result.stdout)["node"] == "node-3"


def test_json_without_once_is_refused(gpus, fake_nvml_dir):
    result = run_cli(["node-agent", "--json"], env={"LD_LIBRARY_PATH": str(fake_nvml_dir), **gpus.env()})
    assert result.returncode == 2
    assert "--json needs --once" in result.stderr
