"""Prometheus and the attribution provider are reached over verified TLS with a credential (issue 8, item 6).

A real Prometheus serves https with a certificate from a CA made here
(``openssl``) and demands basic auth (``--web.config.file``, a bcrypt hash).
A certificate that does not verify is one clear error; the right CA and the
right credential work; a wrong credential is refused. The attribution
provider, an https server on loopback, checks a bearer token given through
the environment. No secret ever appears in a message.
"""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import bcrypt
import pytest

from lazarus.config import PrometheusSettings, load_settings
from lazarus.http_auth import http_auth
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.straggler.prometheus import PrometheusQueryError, PrometheusThroughput, PrometheusUnavailableError
from lazarus.telemetry.enrich import Enricher
from tests.straggler.prometheus_server import running_prometheus

pytestmark = pytest.mark.prometheus

PASSWORD = "s3cret-pass-word"
TOKEN = "t0ken-never-logged"


@dataclass
class Pki:
    ca: Path
    other_ca: Path
    cert: Path
    key: Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    key, cert = directory / f"{name}.key", directory / f"{name}.pem"
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        f"/CN={name}",
        "-keyout",
        str(key),
        "-out",
        str(cert),
    )
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A CA that signed a certificate for 127.0.0.1, and another CA that did not."""
    d = tmp_path_factory.mktemp("pki")
    ca, ca_key = _ca(d, "lazarus-test-ca")
    other, _ = _ca(d, "some-other-ca")
    key, csr, cert, ext = d / "server.key", d / "server.csr", d / "server.pem", d / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        str(ext),
        "-out",
        str(cert),
    )
    return Pki(ca=ca, other_ca=other, cert=cert, key=key)


@pytest.fixture(scope="module")
def secure_prometheus(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("prometheus") is None:
        pytest.skip("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    web = (
        f"tls_server_config:\n  cert_file: {pki.cert}\n  key_file: {pki.key}\n"
        f"basic_auth_users:\n  lazarus: '{hashed}'\n"
    )
    auth = {"Authorization": "Basic " + base64.b64encode(f"lazarus:{PASSWORD}".encode()).decode()}
    context = ssl.create_default_context(cafile=str(pki.ca))
    root = tmp_path_factory.mktemp("prometheus-tls")
    with running_prometheus(
        root,
        "global:\n  scrape_interval: 15s\n",
        range(19100, 19110),
        web_config=web,
        ready_context=context,
        ready_headers=auth,
    ) as url:
        yield url


def _client(url: str, tmp_path: Path, **settings: object) -> PrometheusThroughput:
    prom = PrometheusSettings(url=url, **settings)
    return PrometheusThroughput(url, timeout_s=5, auth=http_auth(prom, "Prometheus"))


def _basic_auth_file(tmp_path: Path, password: str = PASSWORD) -> Path:
    path = tmp_path / "prometheus-basic-auth"
    path.write_text(f"lazarus:{password}\n")
    path.chmod(0o600)
    return path


def test_a_certificate_from_another_ca_is_one_clear_error(secure_prometheus, pki, tmp_path):
    api = _client(secure_prometheus, tmp_path, ca_file=pki.other_ca, basic_auth_file=_basic_auth_file(tmp_path))
    with pytest.raises(PrometheusUnavailableError) as caught:
        api.instant("node health query", "up")
    assert str(caught.value) == (
        f"Prometheus at {secure_prometheus}: its TLS certificate does not verify against "
        f"the CA bundle {pki.other_ca}; set prometheus.ca_file to the CA that signed it"
    )


def test_without_a_ca_file_the_system_cas_are_used_and_certificates_are_still_checked(secure_prometheus, tmp_path):
    api = _client(secure_prometheus, tmp_path, basic_auth_file=_basic_auth_file(tmp_path))
    with pytest.raises(PrometheusUnavailableError, match="does not verify against the system CAs"):
        api.instant("node health query", "up")


def test_the_right_ca_and_basic_auth_from_a_file_work(secure_prometheus, pki, tmp_path):
    api = _client(secure_prometheus, tmp_path, ca_file=pki.ca, basic_auth_file=_basic_auth_file(tmp_path))
    assert api.instant("node health query", "vector(1)")[0]["value"][1] == "1"


def test_a_wrong_password_is_refused_and_never_shown(secure_prometheus, pki, tmp_path):
    api = _client(
        secure_prometheus, tmp_path, ca_file=pki.ca, basic_auth_file=_basic_auth_file(tmp_path, "wrong-" + PASSWORD)
    )
    with pytest.raises(PrometheusQueryError, match=r"refused the credentials \(401\)") as caught:
        api.instant("node health query", "up")
    assert PASSWORD not in str(caught.value)


def test_no_credential_is_refused(secure_prometheus, pki, tmp_path):
    with pytest.raises(PrometheusQueryError, match="refused the credentials"):
        _client(secure_prometheus, tmp_path, ca_file=pki.ca).instant("node health query", "up")


class TokenProvider:
    """An https attribution provider that answers only requests with the expected bearer token."""

    def __init__(self, pki: Pki) -> None:
        outer = self
        self.seen: list[str | None] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.seen.append(self.headers.get("Authorization"))
                ok = self.headers.get("Authorization") == f"Bearer {TOKEN}"
                self.send_response(200 if ok else 401)
                self.end_headers()
                self.wfile.write(json.dumps({"category": "hardware"}).encode() if ok else b"no")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(pki.cert, pki.key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/attribute"

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def provider(pki: Pki) -> Iterator[TokenProvider]:
    server = TokenProvider(pki)
    yield server
    server.close()


UNKNOWN = Diagnosis(
    failure_kind=FailureKind.CRASH,
    category=Category.UNKNOWN,
    signature="slurm_job_failed",
    retry_advice=RetryAdvice.RETRY_SAME_NODES,
    confidence=0.4,
)


@pytest.mark.asyncio(loop_scope="session")
async def test_the_provider_gets_the_bearer_token_from_the_environment_over_verified_tls(provider, pki, monkeypatch):
    monkeypatch.setenv("LAZARUS_ATTRIBUTION__BEARER_TOKEN", TOKEN)
    settings = load_settings(attribution={"provider_url": provider.url, "ca_file": str(pki.ca)})
    result = await Enricher(settings).attribute(UNKNOWN, 7, 0, ["n1"])
    assert result.category == Category.HARDWARE and provider.seen == [f"Bearer {TOKEN}"]
    assert TOKEN not in repr(settings) and TOKEN not in settings.model_dump_json()


@pytest.mark.asyncio(loop_scope="session")
async def test_a_provider_whose_certificate_does_not_verify_is_not_sent_the_token(provider, pki, monkeypatch):
    monkeypatch.setenv("LAZARUS_ATTRIBUTION__BEARER_TOKEN", TOKEN)
    settings = load_settings(attribution={"provider_url": provider.url, "ca_file": str(pki.other_ca)})
    result = await Enricher(settings).attribute(UNKNOWN, 7, 0, ["n1"])
    assert result.category == Category.UNKNOWN and provider.seen == []
    assert "CERTIFICATE_VERIFY_FAILED" in result.notes[-1] and TOKEN not in result.notes[-1]


def test_a_token_in_the_environment_never_shows_in_the_settings(monkeypatch):
    monkeypatch.setenv("LAZARUS_PROMETHEUS__BEARER_TOKEN", TOKEN)
    settings = load_settings()
    assert http_auth(settings.prometheus, "Prometheus").header_values() == {"Authorization": f"Bearer {TOKEN}"}
    assert TOKEN not in repr(settings) and TOKEN not in str(http_auth(settings.prometheus, "Prometheus"))


def test_two_credentials_at_once_are_refused(tmp_path):
    with pytest.raises(Exception, match="give at most one credential; got bearer_token_file and basic_auth_file"):
        load_settings(prometheus={"bearer_token_file": str(tmp_path / "t"), "basic_auth_file": str(tmp_path / "b")})
