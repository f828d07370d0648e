"""Without a usable NVML the agent says so in one sentence (exit 3), never with a traceback."""

from pathlib import Path

import pytest

from lazarus.health.nvml import NvmlReader, NvmlUnavailableError
from tests.health.helpers import run_cli


def test_a_machine_without_libnvidia_ml_gets_one_clear_message(tmp_path):
    result = run_cli(["node-agent", "--once"], env={"LD_LIBRARY_PATH": str(tmp_path)})
    assert result.returncode == 3
    assert result.stderr.strip() == (
        "lazarus: NVML not available: libnvidia-ml.so.1 was not found; is the NVIDIA driver installed?"
    )
    assert "Traceback" not in result.stderr


def test_a_driver_that_is_not_loaded_is_named(gpus, fake_nvml_dir):
    gpus.set("*", "init_error", 9)  # NVML_ERROR_DRIVER_NOT_LOADED
    result = run_cli(["node-agent", "--once"], env={"LD_LIBRARY_PATH": str(fake_nvml_dir), **gpus.env()})
    assert result.returncode == 3
    assert "the NVIDIA kernel driver is not loaded; is the NVIDIA driver installed?" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_explicit_library_path_that_cannot_load_is_reported(tmp_path):
    with pytest.raises(NvmlUnavailableError, match=r"NVML not available: cannot load .*missing\.so"):
        NvmlReader(library=Path(tmp_path / "missing.so"))
