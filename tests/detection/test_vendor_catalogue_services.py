"""Recognition from the network services' own client libraries, eleventh pass of issue 9: the strings that the
experiment trackers (wandb 0.31.0: errors/errors.py, sdk/lib/retry.py, apis/normalize.py, wbauth; mlflow-skinny
3.17.2: utils/rest_utils.py, utils/request_utils.py, exceptions.py; comet_ml 3.58.8: logging_messages.py,
exceptions.py), grpcio 1.85.3 (_channel.py), the etcd clients (etcd3 0.12.0, python-etcd 0.4.5), redis 8.1.0,
the HTTP clients (urllib3 2.8.0, requests 2.34.2, httpx 0.28.1, httpcore 1.0.9, aiohttp 3.14.5), google-auth
2.63.0 and botocore 1.44.8's credential providers print. Each line is built from a format string or exception
text of the artefact, not copied from a corpus excerpt. Every family also pins lines that must stay "no
failure": the clients print them when they retry by themselves or the job carries on."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.detection.normalize import normalize
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES
APP, INFRA = Category.APPLICATION, Category.INFRASTRUCTURE

UNAVAILABLE = ("remote_request_failed", CRASH, INFRA, SAME)
REFUSED = ("service_credentials_refused", CRASH, APP, STOP)


def grpc_error(status: str, details: str, cls: str = "grpc._channel._InactiveRpcError") -> str:
    """grpcio 1.85.3 _channel.py: '<{} of RPC that terminated with:\\n\\tstatus = {}\\n\\tdetails = "{}"\\n...>'."""
    name = cls.rsplit(".", 1)[1]
    return (
        f'{cls}: <{name} of RPC that terminated with:\n\tstatus = StatusCode.{status}\n\tdetails = "{details}"\n'
        '\tdebug_error_string = "UNKNOWN:Error received from peer  {grpc_status:14}"\n>\n'
    )


# ------------------------------------------------------------------------------------------------------ grpcio


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        ("UNAVAILABLE", "grpc._channel._InactiveRpcError"),
        ("DEADLINE_EXCEEDED", "grpc._channel._InactiveRpcError"),
        ("UNAVAILABLE", "grpc._channel._MultiThreadedRendezvous"),
        ("UNAVAILABLE", "grpc.aio.AioRpcError"),
    ],
)
def test_a_grpc_service_that_stays_unavailable_or_misses_the_deadline_is_infrastructure(tmp_path, status, cls):
    text = grpc_error(status, "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.1.2.3:2379", cls)
    assert answer(tmp_path, text) == ("grpc_service_unavailable", CRASH, INFRA, SAME)


@pytest.mark.parametrize("status", ["UNAUTHENTICATED", "PERMISSION_DENIED"])
def test_a_grpc_call_refused_for_its_credentials_stops_the_job(tmp_path, status):
    assert answer(tmp_path, grpc_error(status, "Request had invalid authentication credentials.")) == REFUSED


def test_a_grpc_status_that_names_no_outage_is_not_read_as_one(tmp_path):
    # RESOURCE_EXHAUSTED is a quota or a message over the size limit (the program's): no status-line rule reads it
    text = grpc_error("RESOURCE_EXHAUSTED", "Received message larger than max (5000000 vs. 4194304)")
    assert answer(tmp_path, text)[0] not in ("grpc_service_unavailable", "remote_request_failed")


# ------------------------------------------------------------------------------------ etcd and redis clients


@pytest.mark.parametrize(
    "line",
    [
        # etcd3 0.12.0 client.py _translate_exception: UNAVAILABLE and DEADLINE_EXCEEDED
        "etcd3.exceptions.ConnectionFailedError",
        "etcd3.exceptions.ConnectionTimeoutError",
        # python-etcd 0.4.5 client.py (torchelastic's etcd rendezvous backend)
        'etcd.EtcdConnectionFailed: Connection to etcd failed due to MaxRetryError("HTTPConnectionPool(host='
        "'etcd0', port=2379): Max retries exceeded with url: /v2/keys/torchelastic\")",
        "etcd.EtcdConnectionFailed: No more machines in the cluster",
        # redis 8.1.0: connection.py and the server's LOADING reply
        "redis.exceptions.ConnectionError: Error 111 connecting to redis-0:6379. Connection refused.",
        "redis.exceptions.TimeoutError: Timeout reading from redis-0:6379",
        "redis.exceptions.TimeoutError: Timeout connecting to server",
        "redis.exceptions.BusyLoadingError: Redis is loading the dataset in memory",
    ],
)
def test_an_etcd_or_redis_server_that_cannot_be_reached_is_infrastructure(tmp_path, line):
    assert answer(tmp_path, line + "\n") == UNAVAILABLE


@pytest.mark.parametrize(
    "line",
    [
        # redis 8.1.0 _parsers/base.py: WRONGPASS and NOAUTH replies
        "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.",
        "redis.exceptions.AuthenticationError: Authentication required.",
    ],
)
def test_a_redis_server_that_refuses_the_password_stops_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == REFUSED


# ------------------------------------------------------------------------------ HTTP clients: connect, DNS, TLS


@pytest.mark.parametrize(
    "line",
    [
        "requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected('Remote end closed "
        "connection without response'))",
        "http.client.RemoteDisconnected: Remote end closed connection without response",
        "urllib3.exceptions.ProtocolError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by "
        "peer'))",
        "requests.exceptions.SSLError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded "
        "with url: /api/models (Caused by SSLError(SSLEOFError(8, '[SSL: UNEXPECTED_EOF_WHILE_READING] EOF occurred "
        "in violation of protocol (_ssl.c:1006)')))",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.wandb.ai', port=443): Max retries "
        'exceeded with url: /graphql (Caused by NameResolutionError("<urllib3.connection.HTTPSConnection object at '
        "0x7f>: Failed to resolve 'api.wandb.ai' ([Errno -3] Temporary failure in name resolution)\"))",
        "httpx.ConnectError: [Errno 111] Connection refused",
        "httpx.ConnectError: [Errno -3] Temporary failure in name resolution",
        "httpx.ConnectTimeout: timed out",
        "httpx.ReadTimeout: The read operation timed out",
        "httpx.RemoteProtocolError: Server disconnected without sending a response.",
        "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host api.example:443 ssl:default "
        "[Connect call failed ('10.0.0.5', 443)]",
        "aiohttp.client_exceptions.ClientConnectorDNSError: Cannot connect to host api.example:443 ssl:default "
        "[Temporary failure in name resolution]",
        "aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected",
        "google.auth.exceptions.TransportError: HTTPSConnectionPool(host='oauth2.googleapis.com', port=443): Max "
        "retries exceeded with url: /token (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection "
        "object at 0x7f>: Failed to establish a new connection: [Errno 101] Network is unreachable'))",
    ],
)
def test_an_http_service_that_cannot_be_reached_or_drops_the_connection_is_infrastructure(tmp_path, line):
    assert answer(tmp_path, line + "\n") == UNAVAILABLE


@pytest.mark.parametrize(
    "line",
    [
        "urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f>: Failed to "
        "resolve 'hub.example' ([Errno -2] Name or service not known)",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='mlflow.example', port=443): Max retries "
        'exceeded with url: /api/2.0/mlflow/runs/create (Caused by NameResolutionError("<urllib3.connection.'
        "HTTPSConnection object at 0x7f>: Failed to resolve 'mlflow.example' ([Errno -2] Name or service not known)\"))",
        "aiohttp.client_exceptions.ClientConnectorDNSError: Cannot connect to host api.example:443 ssl:default "
        "[Name or service not known]",
        "httpx.ConnectError: [Errno -5] No address associated with hostname",
    ],
)
def test_a_service_host_name_that_dns_does_not_know_is_a_wrong_address_and_stops_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("service_host_not_resolved", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "requests.exceptions.SSLError: HTTPSConnectionPool(host='mlflow.internal', port=443): Max retries exceeded "
        "with url: /api/2.0/mlflow/runs/create (Caused by SSLError(SSLCertVerificationError(1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in certificate chain "
        "(_ssl.c:1006)')))",
        "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get "
        "local issuer certificate (_ssl.c:1006)",
        "httpcore.ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate "
        "(_ssl.c:1006)",
        "aiohttp.client_exceptions.ClientConnectorCertificateError: Cannot connect to host api.example:443 ssl:True "
        "[SSLCertVerificationError: (1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get "
        "local issuer certificate (_ssl.c:1006)')]",
        # neptune 1.14.0 common/exceptions.py
        "neptune.common.exceptions.NeptuneSSLVerificationError: \n\n----NeptuneSSLVerificationError-----\n\nThe "
        "Neptune client was unable to verify your SSL Certificate.",
    ],
)
def test_a_service_certificate_the_node_does_not_trust_stops_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("tls_certificate_rejected", CRASH, APP, STOP)


def test_a_python_module_path_with_a_digit_is_not_stripped_as_a_launcher_host_prefix():
    # the pdsh/DeepSpeed "host01: " prefix rule read "urllib3.exceptions.ProtocolError: " as a host name
    line = "urllib3.exceptions.ProtocolError: ('Connection aborted.', RemoteDisconnected('closed'))"
    assert normalize(line) == line
    assert normalize("gpu-node01.cluster.local: NCCL WARN x") == "NCCL WARN x"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # requests 2.34.2 models.py raise_for_status (huggingface_hub's HfHubHTTPError keeps the text), httpx 0.28.1
        # _models.py, aiohttp 3.14.5 ClientResponseError.__str__
        (
            "requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://hub.example/api/m",
            UNAVAILABLE,
        ),
        (
            "huggingface_hub.errors.HfHubHTTPError: 504 Server Error: Gateway Time-out for url: https://hub.example/a",
            UNAVAILABLE,
        ),
        (
            "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://hub.example/api/m",
            UNAVAILABLE,
        ),
        (
            "httpx.HTTPStatusError: Server error '503 Service Unavailable' for url 'https://api.example/v1/x'",
            UNAVAILABLE,
        ),
        (
            "aiohttp.client_exceptions.ClientResponseError: 502, message='Bad Gateway', url='https://api.example/v1/x'",
            UNAVAILABLE,
        ),
        ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://hub.example/api/m", REFUSED),
        ("httpx.HTTPStatusError: Client error '403 Forbidden' for url 'https://api.example/v1/x'", REFUSED),
        (
            "aiohttp.client_exceptions.ClientResponseError: 401, message='Unauthorized', url='https://api.example/v1/x'",
            REFUSED,
        ),
        # a 404 names a wrong path: application, stop (the checkpoint/data pass reads it as a refused request)
        (
            "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://hub.example/api/m",
            ("object_store_request_refused", CRASH, APP, STOP),
        ),
    ],
)
def test_an_http_status_error_is_an_outage_for_429_and_5xx_and_refused_credentials_for_401_and_403(
    tmp_path, line, expected
):
    assert answer(tmp_path, line + "\n") == expected


# --------------------------------------------------------------------------------- experiment trackers


@pytest.mark.parametrize(
    "line",
    [
        # wandb 0.31.0 errors/errors.py CommError ("Error communicating with W&B servers"), apis/normalize.py
        "wandb.errors.errors.CommError: Run initialization has timed out after 90.0 sec. Please try increasing the "
        "timeout with the `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.",
        "wandb.errors.errors.CommError: HTTP 503: upstream connect error or disconnect/reset before headers",
        # mlflow-skinny 3.17.2 rest_utils.py: the codes its session retries, once spent; the timeout; RestException
        "mlflow.exceptions.MlflowException: API request to endpoint /api/2.0/mlflow/runs/log-batch failed with error "
        "code 503 != 200. Response body: '<html>Service Unavailable</html>'",
        "mlflow.exceptions.MlflowException: API request to http://mlflow:5000/api/2.0/mlflow/runs/create failed with "
        "exception HTTPConnectionPool(host='mlflow', port=5000): Max retries exceeded with url: "
        "/api/2.0/mlflow/runs/create (Caused by ResponseError('too many 503 error responses'))",
        "mlflow.exceptions.MlflowException: API request to http://mlflow:5000/api/2.0/mlflow/runs/log-metric failed "
        "with timeout exception HTTPConnectionPool(host='mlflow', port=5000): Read timed out. (read timeout=120). To "
        "increase the timeout, set the environment variable MLFLOW_HTTP_REQUEST_TIMEOUT to a larger value.",
        "mlflow.exceptions.RestException: TEMPORARILY_UNAVAILABLE: The service is temporarily unavailable.",
        # neptune 1.14.0: raised in the synchronous mode ("The connection to the Neptune server was lost.")
        "neptune.exceptions.NeptuneConnectionLostException: \n\n----NeptuneConnectionLostException-----\n\nThe "
        "connection to the Neptune server was lost.",
    ],
)
def test_a_tracker_server_that_stays_unavailable_through_the_clients_retries_is_infrastructure(tmp_path, line):
    assert answer(tmp_path, line + "\n") == UNAVAILABLE


@pytest.mark.parametrize(
    "line",
    [
        "wandb.errors.errors.AuthenticationError: WANDB_API_KEY invalid: API key must be 40 characters long, yours "
        "was 12",
        "wandb.errors.errors.CommError: HTTP 403: permission denied",
        "wandb.errors.errors.CommError: HTTP 404: project not found",
        "mlflow.exceptions.MlflowException: API request to endpoint /api/2.0/mlflow/runs/create failed with error "
        "code 403 != 200. Response body: 'Forbidden'",
        "mlflow.exceptions.RestException: PERMISSION_DENIED: User does not have permission to update run.",
        "comet_ml.exceptions.InvalidAPIKey: ('xxxx', 'https://www.comet.com/clientlib/')",
        # wandb wbauth/authenticate.py; neptune 1.14.0 common/exceptions.py (its message opens with a banner line)
        "wandb.errors.errors.UsageError: No API key configured. Use `wandb login` to log in.",
        "neptune.common.exceptions.NeptuneInvalidApiTokenException: \n\n----NeptuneInvalidApiTokenException-----\n\n"
        "The provided API token is invalid.",
    ],
)
def test_a_tracker_that_refuses_the_api_key_or_the_permission_stops_the_job(tmp_path, line):
    assert answer(tmp_path, line + "\n") == REFUSED


@pytest.mark.parametrize(
    "line",
    [
        # wandb 0.31.0 sdk/lib/retry.py: the retry loop's own notices
        "wandb: Network error (ConnectionError), entering retry loop.",
        "wandb: Network error (ReadTimeout), entering retry loop.",
        "wandb: Network error resolved after 0:00:21.123456, resuming normal operation.",
        "wandb: Tracking run with wandb version 0.31.0",
        # wandb 0.31.0 sdk/lib/progress.py prints an operation's error status as "ERROR <status>" under it; wandb-core's
        # statuses while it retries by itself ("retrying HTTP %d: %s", "retrying: %s", "Timed out while retrying: %s")
        "wandb: ⢿ uploading history steps 120-130, summary, console lines 88-90 (3.2s)",
        "wandb:   ERROR retrying HTTP 503: Service Unavailable",
        "wandb:   ERROR retrying HTTP 429: Too Many Requests",
        'wandb:   ERROR retrying: Post "https://api.wandb.ai/files/u/p/r/file_stream": dial tcp: lookup api.wandb.ai: '
        "Temporary failure in name resolution",
        'wandb:   ERROR Timed out while retrying: Post "https://api.wandb.ai/graphql": context deadline exceeded',
        "wandb: W&B API key is configured. Use `wandb login --relogin` to force relogin",
        # urllib3 2.8.0's retry notice, quoting a DNS or TLS failure it retries
        "WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f>: "
        "Failed to resolve 'api.wandb.ai' ([Errno -2] Name or service not known)\")': /graphql",
        "WARNING:urllib3.connectionpool:Retrying (Retry(total=6, connect=7, read=6, redirect=7, status=7)) after "
        "connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
        "verify failed (_ssl.c:1006)'))': /api/2.0/mlflow/runs/log-batch",
        # mlflow's registries log a failed lookup as a warning and carry on (tracking/context/registry.py)
        "2026/12/01 05:00:01 WARNING mlflow.tracking.context.registry: Encountered unexpected error during resolving "
        "tags: API request to endpoint /api/2.0/mlflow/runs/log-batch failed with error code 503 != 200.",
        # neptune 1.14.0 internal/threading/daemon.py (LOG_FORMAT "[%(name)s] [%(levelname)s] %(message)s"): the
        # asynchronous mode keeps tracking locally and reconnects by itself
        "[neptune] [warning] Experiencing connection interruptions. Will try to reestablish communication with "
        "Neptune. Internal exception was: ConnectionError",
        "[neptune] [info] Communication with Neptune restored!",
        # comet_ml 3.58.8 _online.py logs INTERNET_CONNECTION_ERROR and the job goes on without the tracker (the
        # console formatter hides its traceback unless COMET_LOGGING_CONSOLE is set)
        "COMET ERROR: Failed to establish a connection to Comet server. Please check your internet connection. Your "
        "experiment will not be logged",
    ],
)
def test_a_tracker_or_client_that_retries_by_itself_or_carries_on_is_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------ cloud credentials


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "google.auth.exceptions.RefreshError: ('invalid_grant: Token has been expired or revoked.', {'error': "
            "'invalid_grant', 'error_description': 'Token has been expired or revoked.'})",
            "service_credentials_refused",
        ),
        (
            "google.auth.exceptions.DefaultCredentialsError: Your default credentials were not found. To set up "
            "Application Default Credentials, see https://cloud.google.com/docs/authentication/external/set-up-adc "
            "for more information.",
            "service_credentials_refused",
        ),
        (
            "botocore.exceptions.PartialCredentialsError: Partial credentials found in env, missing: "
            "AWS_SECRET_ACCESS_KEY",
            "service_credentials_refused",
        ),
        (
            "botocore.exceptions.UnauthorizedSSOTokenError: The SSO session associated with this profile has expired "
            "or is otherwise invalid. To refresh this SSO session run aws sso login with the corresponding profile.",
            "service_credentials_refused",
        ),
        (
            "botocore.exceptions.ClientError: An error occurred (ExpiredTokenException) when calling the AssumeRole "
            "operation: The security token included in the request is expired",
            "object_store_request_refused",
        ),
    ],
)
def test_expired_or_missing_cloud_credentials_stop_the_job(tmp_path, line, signature):
    assert answer(tmp_path, line + "\n") == (signature, CRASH, APP, STOP)


ELEVENTH_PASS_SIGNATURES = [
    "service_credentials_refused",
    "tls_certificate_rejected",
    "service_host_not_resolved",
    "grpc_service_unavailable",
    "remote_request_failed",
]


@pytest.mark.parametrize("signature_id", ELEVENTH_PASS_SIGNATURES)
def test_the_eleventh_pass_keywords_start_where_the_prefilter_already_stops(signature_id):
    """A keyword starting with a lower-case letter makes the prefilter stop at many positions of healthy lines
    (docs/adding-a-signature.md); these start with a capital letter. The benign entries' keywords
    (http_client_retry_notice's) are not in the prefilter."""
    keywords = default_catalogue().get(signature_id).keywords
    assert all(k[0].isupper() for k in keywords), keywords
