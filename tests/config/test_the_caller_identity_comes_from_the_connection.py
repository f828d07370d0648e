"""The identity a Lazarus client sends with every message comes from its connection, not from text: the
mTLS client certificate's subject CN where ``temporal.tls`` names one, else the OS user running it."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
from pathlib import Path

import pytest

from lazarus.config import Settings
from lazarus.errors import ConfigError
from lazarus.identity import caller_of, certificate_cn, client_identity
from lazarus.models.callers import Caller


def certificate(tmp_path: Path, subject: str) -> Path:
    key, cert = tmp_path / "client.key", tmp_path / "client.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", subject,
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert


def test_without_tls_the_caller_is_the_os_user_it_runs_as_whatever_the_environment_says(monkeypatch):
    for name in ("USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.setenv(name, "alice")
    assert caller_of(Settings()) == Caller(name=pwd.getpwuid(os.geteuid()).pw_name, source="os-user")


def test_with_a_client_certificate_the_caller_is_its_subject_cn(tmp_path):
    cert = certificate(tmp_path, "/O=Lazarus/CN=alice.ops")
    settings = Settings(temporal={"tls": True, "tls_client_cert": cert, "tls_client_key": tmp_path / "client.key"})
    assert caller_of(settings) == Caller(name="alice.ops", source="certificate")


def test_a_certificate_without_a_subject_cn_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(ConfigError, match="has no subject CN to identify the caller by"):
        certificate_cn(certificate(tmp_path, "/O=Lazarus"))


def test_an_unreadable_certificate_is_refused_with_the_setting_to_fix(tmp_path):
    with pytest.raises(
        ConfigError, match=r"^temporal\.tls_client_cert: cannot read a certificate from .*: No such file"
    ):
        certificate_cn(tmp_path / "missing.crt")


def test_temporals_client_identity_names_the_process_the_host_and_the_caller():
    assert client_identity(Caller(name="alice")) == f"{os.getpid()}@{socket.gethostname()} alice"
    assert client_identity(Caller(name="alice", source="certificate")).endswith(" alice (certificate CN)")
