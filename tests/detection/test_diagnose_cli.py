"""`lazarus diagnose`: the JSON contract, the human summary, node options and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

from lazarus.cli.main import main
from lazarus.models.diagnosis import Diagnosis

CASCADE = """\
0: SLURM_JOB_ID=9
May  1 12:00:03 node3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.
5: RuntimeError: CUDA error: unspecified launch failure
0: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
"""
CONTRACT_KEYS = {"failure_kind", "category", "signature", "retry_advice", "implicated_nodes", "confidence", "evidence"}


def test_json_output_is_exactly_the_diagnosis_contract(tmp_path, capsys):
    log = tmp_path / "slurm-9.out"
    log.write_text(CASCADE)
    assert main(["diagnose", str(log), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data.keys() >= CONTRACT_KEYS
    Diagnosis.model_validate(data)  # no extra keys, valid enums
    assert data["failure_kind"] == "crash" and data["category"] == "hardware"
    assert data["retry_advice"] == "retry_excluding_nodes"
    assert data["implicated_nodes"] == ["node3"]
    assert set(data["evidence"][0]) == {"file", "line_no", "text", "rule"}
    assert 0 <= data["confidence"] <= 1


def test_human_summary_names_the_verdict_and_the_node(tmp_path, capsys):
    log = tmp_path / "slurm-9.out"
    log.write_text(CASCADE)
    assert main(["diagnose", str(log)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CRASH (hardware) - signature xid_79_fallen_off_bus")
    assert "implicated nodes: node3" in out
    assert "evidence:" in out


def test_nodes_and_tasks_per_node_name_nodes_from_rank_prefixes(tmp_path, capsys):
    log = tmp_path / "slurm-9.out"
    log.write_text("5: RuntimeError: CUDA error: uncorrectable ECC error encountered\n")
    assert main(["diagnose", str(log), "--json", "--nodes", "gpu[1-4]", "--tasks-per-node", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["implicated_nodes"] == ["gpu3"]


def test_a_healthy_log_exits_zero_with_no_failure(tmp_path, capsys):
    log = tmp_path / "ok.out"
    log.write_text("LAZARUS step=10 loss=2.0\n")
    assert main(["diagnose", str(log)]) == 0
    assert capsys.readouterr().out.startswith("No failure found.")


def test_a_missing_file_exits_2_with_one_clear_line(tmp_path, capsys):
    assert main(["diagnose", str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"lazarus: cannot read log {tmp_path / 'nope.log'}: no such file"


def test_a_directory_exits_2(tmp_path, capsys):
    assert main(["diagnose", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_tasks_per_node_without_nodes_is_refused(tmp_path, capsys):
    log = tmp_path / "a.log"
    log.write_text("x\n")
    assert main(["diagnose", str(log), "--tasks-per-node", "4"]) == 2
    assert "needs --nodes" in capsys.readouterr().err


def test_the_installed_command_prints_no_traceback(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", "diagnose", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
