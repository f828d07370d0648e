"""A real Debian OpenSSH server on 127.0.0.1:12222 (12222 + N for pytest-xdist worker gwN) for the SSH transport specs.

Everything lives in one temporary directory: its own host key, client key,
authorized_keys, known_hosts and sshd_config. sshd runs in the foreground
(``-D -e``) as our child, so it is stopped by its own pid and nothing global
is touched except the privilege-separation directory ``/run/sshd`` that sshd
requires to exist.
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD_PORT = 12222
SSHD = "/usr/sbin/sshd"


@dataclass
class Sshd:
    port: int
    directory: Path
    process: subprocess.Popen[bytes]
    client_key: Path
    known_hosts: Path
    host_public_key: str

    def connection_pids(self) -> list[int]:
        """Pids of the per-connection sshd processes (children of our sshd), to simulate a lost connection."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def start_sshd(directory: Path, port: int = SSHD_PORT) -> Sshd:
    if _port_open(port):
        raise RuntimeError(f"port {port} is already in use; the SSH transport specs need it for their own sshd")
    _keygen(directory / "host_ed25519")
    _keygen(directory / "client_ed25519")
    (directory / "authorized_keys").write_text((directory / "client_ed25519.pub").read_text())
    (directory / "authorized_keys").chmod(0o644)
    host_public_key = (directory / "host_ed25519.pub").read_text().strip()
    known_hosts = directory / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {host_public_key}\n")
    config = directory / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {directory / 'host_ed25519'}\n"
        f"PidFile {directory / 'sshd.pid'}\nAuthorizedKeysFile {directory / 'authorized_keys'}\n"
        # StrictModes off: the files live under a world-writable temporary directory.
        "StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nMaxSessions 20\n"
    )
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    subprocess.run([SSHD, "-t", "-f", str(config)], check=True)
    log = open(directory / "sshd.log", "wb")  # noqa: SIM115 - owned by the process for its lifetime
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not _port_open(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"sshd did not start; see {directory / 'sshd.log'}")
        time.sleep(0.05)
    return Sshd(port, directory, process, directory / "client_ed25519", known_hosts, host_public_key)
