"""The fake ``libnvidia-ml.so.1`` of the dev stack and the tests, built with gcc from the C source shipped here.

It lets the node agent run its real pynvml code on machines without a GPU. Each
fake node is scripted through two files (see ``fake_nvml.c``): ``FAKE_NVML_STATE``
(per-GPU readings) and ``FAKE_NVML_EVENTS`` (pending Xid events, e.g. ``1 79``),
which the demo writes when it injects a GPU failure. The library is rebuilt only
when the source changed; no compiler means no fake, and the caller says so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from lazarus.errors import DevStackError, shorten

LIBRARY = "libnvidia-ml.so.1"
SOURCE = "fake_nvml.c"


def build_fake_nvml(out_dir: Path) -> Path | None:
    """``out_dir/libnvidia-ml.so.1``, built (or reused when its source is unchanged); None without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    source = resources.files("lazarus.devstack").joinpath(SOURCE).read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    out_dir.mkdir(parents=True, exist_ok=True)
    library, stamp = out_dir / LIBRARY, out_dir / f"{LIBRARY}.sha256"
    if library.exists() and stamp.exists() and stamp.read_text() == digest:
        return library
    (out_dir / SOURCE).write_bytes(source)
    building = out_dir / f".{LIBRARY}.{os.getpid()}"
    proc = subprocess.run(
        [gcc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", str(building), str(out_dir / SOURCE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise DevStackError(f"building the fake {LIBRARY} failed: {shorten(proc.stderr.strip(), 400)}")
    building.replace(library)
    stamp.write_text(digest)
    return library


class FakeGpuScript:
    """One fake node's script files: its GPUs' readings and its pending Xid events."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state = directory / "nvml-state"
        self.events = directory / "nvml-events"

    def create(self, gpus: int) -> None:
        """Healthy GPUs and no pending event, unless the files exist already (an agent restart keeps them)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.state.exists():
            self.state.write_text(f"* gpus {gpus}\n")
        self.events.touch()

    def repair(self, gpus: int) -> None:
        """Healthy GPUs again (a node returned to service after a demo broke it); the agent still remembers
        the Xids it saw for its Xid window."""
        fresh = self.state.with_name(f".{self.state.name}.new")
        fresh.write_text(f"* gpus {gpus}\n")
        fresh.replace(self.state)
        self.events.write_text("")

    def xid(self, gpu: int, code: int) -> None:
        """The GPU raises Xid ``code``: the node agent receives it at its next poll."""
        with self.events.open("a") as f:
            f.write(f"{gpu} {code}\n")

    def set(self, gpu: int | str, key: str, value: object) -> None:
        """A reading of the GPU (``*``: every GPU), e.g. ``ecc_dbe_vol 1``."""
        with self.state.open("a") as f:
            f.write(f"{gpu} {key} {value}\n")

    def env(self) -> dict[str, str]:
        return {"FAKE_NVML_STATE": str(self.state), "FAKE_NVML_EVENTS": str(self.events)}
