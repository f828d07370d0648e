"""Recognition from the checkpoint, storage and data libraries' own messages, eleventh pass of issue 9: the strings
that huggingface_hub 2.4.0 (utils/_http.py: hf_raise_for_status and http_backoff; file_download.py), httpx2 2.16.2
and httpx 0.28.1 (raise_for_status), requests 2.34.2, datasets 5.2.0 (load.py, exceptions.py,
utils/file_utils.py), safetensors 0.8.0 (strings of _safetensors_rust.abi3.so), torch 2.14.1
(torch/distributed/checkpoint: api.py, default_planner.py, state_dict_loader.py), torchft 0.2.0 (manager.py),
azure-core 1.41.0 and azure-storage-blob 12.31.1 (under adlfs 2026.8.0), nemo_toolkit 3.0.0 (utils/exp_manager.py),
mosaicml-streaming 0.13.0 (base/dataset.py), webdataset 1.0.2 (handlers.py, gopen.py), torchtitan 0.3.0
(components/checkpointer/dcp.py), torchdata 0.11.0 (stateful_dataloader.py), transformers 5.24.0 (utils/hub.py),
fsspec 2026.9.0 (asyn.py) and colossalai 0.5.0 (checkpoint_io) print. Each line is built from a format
string of the artefact, not copied from a corpus excerpt. Every family also pins lines that must stay "no failure":
the software prints them when it retries by itself, heals, or only warns."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES
APP, INFRA = Category.APPLICATION, Category.INFRASTRUCTURE
RANK = "[rank0]: "
HUB_LOG = "WARNING:huggingface_hub.utils._http:"
HUB_URL = "https://huggingface.co/org/model/resolve/main/model-00001-of-00004.safetensors"

UNAVAILABLE = ("object_store_unavailable", CRASH, INFRA, SAME)
REFUSED = ("object_store_request_refused", CRASH, APP, STOP)
UNREACHABLE = ("remote_request_failed", CRASH, INFRA, SAME)


# ------------------------------------------------------------------------------- Hugging Face Hub (huggingface_hub)


@pytest.mark.parametrize(
    "line",
    [
        # hf_raise_for_status keeps httpx2's "Server error '{status} {reason}' for url '{url}'" for a 5xx
        "huggingface_hub.errors.HfHubHTTPError: Server error '503 Service Unavailable' for url "
        "'https://huggingface.co/api/models/org/model/revision/main' (Request ID: Root=1-6744-abc)",
        f"huggingface_hub.errors.HfHubHTTPError: Server error '504 Gateway Timeout' for url '{HUB_URL}'",
        # its own 429 texts: the rate limit reached, or a bare 429
        "huggingface_hub.errors.HfHubHTTPError: 429 Too Many Requests: you have reached your 'resolvers' rate limit.",
        "huggingface_hub.errors.HfHubHTTPError: 429 Too Many Requests for url: https://huggingface.co/api/models/org/m.",
        # CPython's urllib.error.HTTPError
        "urllib.error.HTTPError: HTTP Error 503: Service Unavailable",
    ],
)
def test_the_hub_unavailable_or_rate_limited_after_its_retries_is_infrastructure_retried(tmp_path, line):
    """http_backoff retries 429 and 5xx by itself; the error reaching the program means the hub stayed so."""
    assert answer(tmp_path, line + "\n") == UNAVAILABLE


@pytest.mark.parametrize(
    "line",
    [
        # huggingface_hub < 1.0 through requests: "{status} Server Error: {reason} for url: {url}"
        "huggingface_hub.utils._errors.HfHubHTTPError: 500 Server Error: Internal Server Error for url: "
        "https://huggingface.co/api/models/org/model/revision/main (Request ID: Root=1-65)",
        RANK + "requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: "
        "https://huggingface.co/datasets/org/set/resolve/main/data/train-00000-of-00010.parquet",
    ],
)
def test_the_hub_unavailable_through_requests_is_the_same_outage_read_by_the_http_clients_rule(tmp_path, line):
    """requests' raise_for_status text is read by the HTTP clients' rule (the services pass): the same answer,
    infrastructure, retried on the same nodes."""
    assert answer(tmp_path, line + "\n") == UNREACHABLE


@pytest.mark.parametrize(
    "line",
    [
        "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-6744-abc)",
        "huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-6744-abc)",
        "huggingface_hub.errors.RevisionNotFoundError: 404 Client Error. (Request ID: Root=1-6744-abc)",
        "huggingface_hub.errors.RemoteEntryNotFoundError: 404 Client Error. (Request ID: Root=1-6744-abc)",
        "huggingface_hub.errors.HfHubHTTPError: 403 Forbidden: Authorization error..",
        "urllib.error.HTTPError: HTTP Error 404: Not Found",
    ],
)
def test_the_hub_refusing_the_repository_or_token_is_the_applications_and_stops(tmp_path, line):
    assert answer(tmp_path, line + "\n") == REFUSED


def test_a_hub_file_not_found_for_a_connection_issue_is_infrastructure_retried(tmp_path):
    """file_download.py: "most likely a connection issue or Hub downtime" and the file is not cached."""
    line = (
        "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the "
        "Hub and we cannot find the requested files in the local cache. Please check your connection and try "
        "again or make sure your Internet connection is on."
    )
    assert answer(tmp_path, line + "\n") == UNREACHABLE


def test_a_hub_file_missing_in_offline_mode_is_the_applications_setting(tmp_path):
    """local_files_only or HF_HUB_OFFLINE: no look-up was made; the setting or the cache must change."""
    line = (
        "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
        "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set "
        "'local_files_only' to False."
    )
    assert answer(tmp_path, line + "\n") == ("python_exception", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "text",
    [
        HUB_LOG + f"HTTP Error 503 thrown while requesting GET {HUB_URL}",
        HUB_LOG + f"'[Errno 104] Connection reset by peer' thrown while requesting HEAD {HUB_URL}",
        HUB_LOG + "'timed out' thrown while requesting GET https://huggingface.co/api/models/org/model",
        HUB_LOG + "Retrying in 8s [Retry 4/5].",
        HUB_LOG + "Rate limited. Waiting 61.0s before retry [Retry 1/5].",
        "WARNING:huggingface_hub.file_download:Error while downloading from https://cas-bridge.xethub.hf.co/xet/ab: "
        "The read operation timed out\nTrying to resume download...",
        # datasets 5.2.0 streaming: the 429 text logged alone, then its own retry
        "429 Too Many Requests: you have reached your 'resolvers' rate limit.\nRetry after 60 seconds (0/3000 "
        "requests remaining in current 300s window).\nUrl: https://huggingface.co/api/datasets/org/set/tree/main.\n"
        "Got disconnected from remote data host. Retrying in 60sec [1/20]",
        "Got disconnected from remote data host. Retrying in 5sec [3/20]",
    ],
)
def test_the_hub_and_datasets_retrying_by_themselves_stays_no_failure(tmp_path, text):
    """A connection reset quoted by the retry line was read as NCCL's socket error before this pass."""
    assert kind_of(tmp_path, text) is NONE


def _caused(cause: str, wrapper: str) -> str:
    """A chained traceback: the cause, Python's "direct cause" banner, then the wrapper's exception."""
    return (
        f"{cause}\n\nThe above exception was the direct cause of the following exception:\n\n"
        f'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n{wrapper}\n'
    )


TRANSFORMERS_NO_CONNECTION = (
    "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the "
    "cached files.\nCheck your internet connection or see how to run the library in offline mode at "
    "'https://huggingface.co/docs/transformers/installation#offline-mode'."
)


@pytest.mark.parametrize(
    ("cause", "expected"),
    [
        (
            "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on "
            "the Hub and we cannot find the requested files in the local cache. Please check your connection and "
            "try again or make sure your Internet connection is on.",
            UNREACHABLE,
        ),
        (
            "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
            "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set "
            "'local_files_only' to False.",
            ("python_exception", CRASH, APP, STOP),
        ),
    ],
)
def test_transformers_no_connection_wrapper_yields_to_the_hubs_reason(tmp_path, cause, expected):
    """transformers 5.24.0 utils/hub.py re-raises either LocalEntryNotFoundError with the same words; the hub's
    own line before it says whether the hub was unreachable or the job runs offline."""
    assert answer(tmp_path, _caused(cause, TRANSFORMERS_NO_CONNECTION)) == expected


def test_transformers_no_connection_alone_is_an_unreachable_hub(tmp_path):
    assert answer(tmp_path, TRANSFORMERS_NO_CONNECTION + "\n") == UNREACHABLE


def test_a_hub_server_error_inside_transformers_connection_error_is_the_hubs(tmp_path):
    cause = "huggingface_hub.errors.HfHubHTTPError: Server error '502 Bad Gateway' for url 'https://huggingface.co/api/models/org/m'"
    wrapper = "OSError: There was a specific connection error when trying to load org/m:"
    assert answer(tmp_path, _caused(cause, wrapper)) == UNAVAILABLE


def test_transformers_missing_file_in_a_repository_stays_the_applications(tmp_path):
    line = (
        "OSError: org/m does not appear to have a file named config.json. Checkout "
        "'https://huggingface.co/org/m/tree/main' for available files."
    )
    assert answer(tmp_path, line + "\n") == ("python_exception", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    ["fsspec.exceptions.FSTimeoutError", "fsspec.exceptions.FSTimeoutError: put_file did not complete within 300s."],
)
def test_an_fsspec_call_timing_out_is_an_unreachable_storage_service(tmp_path, line):
    """fsspec 2026.9.0 asyn.py sync(): the async file system's call did not complete within its timeout."""
    assert answer(tmp_path, line + "\n") == UNREACHABLE


# ----------------------------------------------------------------------------------------------------- datasets


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ConnectionError: Couldn't reach 'org/set' on the Hub (LocalEntryNotFoundError)", UNREACHABLE),
        ("ConnectionError: Server Disconnected", UNREACHABLE),
        (
            "datasets.exceptions.DatasetNotFoundError: Dataset 'org/set' doesn't exist on the Hub or cannot be "
            "accessed.",
            ("python_exception", CRASH, APP, STOP),
        ),
        (
            "datasets.exceptions.DataFilesNotFoundError: No (supported) data files found in org/set",
            ("python_exception", CRASH, APP, STOP),
        ),
    ],
)
def test_a_dataset_unreachable_is_retried_and_a_dataset_that_does_not_exist_stops(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


# --------------------------------------------------------------------------------------------------- safetensors


@pytest.mark.parametrize(
    "reason",
    [
        "header too large",
        "header too small",
        "invalid JSON in header: EOF while parsing a value at line 1 column 0",
        "MetadataIncompleteBuffer",
    ],
)
def test_a_safetensors_file_whose_header_cannot_be_read_is_a_corrupt_checkpoint(tmp_path, reason):
    line = f"safetensors_rust.SafetensorError: Error while deserializing header: {reason}"
    assert answer(tmp_path, line + "\n") == ("checkpoint_corrupt", CRASH, APP, STOP)


def test_a_safetensors_file_without_the_tensor_is_a_checkpoint_not_matching_the_model(tmp_path):
    line = "safetensors_rust.SafetensorError: File does not contain tensor model.layers.0.self_attn.q_proj.weight"
    assert answer(tmp_path, line + "\n") == ("checkpoint_missing", CRASH, APP, STOP)


# ------------------------------------------------------------------------------ torch.distributed.checkpoint (DCP)


def _checkpoint_exception(frame: str, cause: str) -> str:
    """CheckpointException.__str__ (api.py): the ranks, then per rank a traceback header, its frames and exception."""
    return "\n".join(
        RANK + part
        for part in (
            "torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0, 1, 2, 3])",
            "Traceback (most recent call last): (RANK 0)",
            f'  File "/usr/lib/python3/dist-packages/{frame}", line 248, in all_gather',
            "    result = map_fun()",
            cause,
        )
    )


@pytest.mark.parametrize(
    ("frame", "cause", "expected"),
    [
        (
            "torch/distributed/checkpoint/utils.py",
            "RuntimeError: Missing key in checkpoint state_dict: model.layers.0.attention.wq.weight.",
            ("checkpoint_missing", CRASH, APP, STOP),
        ),
        (
            "torch/distributed/checkpoint/utils.py",
            "ValueError: Size mismatch between saved torch.Size([4096, 4096]) and current: torch.Size([2048, 4096]) "
            "for model.layers.0.attention.wq.weight",
            ("checkpoint_missing", CRASH, APP, STOP),
        ),
        (
            "torch/distributed/checkpoint/filesystem.py",
            "OSError: [Errno 28] No space left on device",
            ("storage_no_space", CRASH, INFRA, STOP),
        ),
        ("s3fs/core.py", "ConnectionError: Connection aborted.", UNREACHABLE),
        (
            "torch/distributed/checkpoint/filesystem.py",
            "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/step-1000/.metadata'",
            ("python_file_not_found", CRASH, APP, STOP),
        ),
    ],
)
def test_a_distributed_checkpoint_failure_is_answered_by_the_ranks_own_exception(tmp_path, frame, cause, expected):
    """A storage error while saving stays the storage's (before, a ConnectionError inside was the program's)."""
    assert answer(tmp_path, _checkpoint_exception(frame, cause) + "\n") == expected


def test_the_checkpoint_exception_alone_is_the_programs_own_exception(tmp_path):
    line = RANK + "torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0])"
    assert answer(tmp_path, line + "\n") == ("dcp_checkpoint_exception", CRASH, APP, STOP)


def test_dcp_loading_without_rank_local_metadata_stays_no_failure(tmp_path):
    """state_dict_loader.py logs it as a warning and loads from the global metadata."""
    assert (
        kind_of(tmp_path, "WARNING:torch.distributed.checkpoint.state_dict_loader:Rank local metadata is not found.")
        is NONE
    )


# ------------------------------------------------------------------------------------ Azure Blob Storage (adlfs)


def _azure_error(exception: str, message: str, code: str) -> str:
    """azure-storage-blob's process_storage_error: the message, RequestId, Time, then "ErrorCode:{code}"."""
    return (
        f"azure.core.exceptions.{exception}: {message}\nRequestId:5d3c2f1e-301e-0042-7c5a-3b5a9b000000\n"
        f"Time:2026-12-01T05:00:00.0000000Z\nErrorCode:{code}\n"
    )


@pytest.mark.parametrize(
    ("exception", "message", "code", "expected"),
    [
        ("HttpResponseError", "The server is busy.", "ServerBusy", UNAVAILABLE),
        (
            "HttpResponseError",
            "Operation could not be completed within the specified time.",
            "OperationTimedOut",
            UNAVAILABLE,
        ),
        ("ResourceNotFoundError", "The specified blob does not exist.", "BlobNotFound", REFUSED),
        (
            "ClientAuthenticationError",
            "Server failed to authenticate the request. Make sure the value of Authorization header is formed "
            "correctly including the signature.",
            "AuthenticationFailed",
            REFUSED,
        ),
    ],
)
def test_azure_storage_errors_are_read_by_their_error_code(tmp_path, exception, message, code, expected):
    assert answer(tmp_path, _azure_error(exception, message, code)) == expected


@pytest.mark.parametrize(
    "line",
    [
        "azure.core.exceptions.ServiceRequestError: <urllib3.connection.HTTPSConnection object at 0x7f3a>: "
        "Failed to establish a new connection: [Errno 111] Connection refused",
        "azure.core.exceptions.ServiceResponseError: ('Connection aborted.', "
        "RemoteDisconnected('Remote end closed connection without response'))",
    ],
)
def test_azure_connection_errors_after_its_retries_are_an_unreachable_service(tmp_path, line):
    """Before this pass the refused connection was read as NCCL's socket error."""
    assert answer(tmp_path, line + "\n") == UNREACHABLE


# --------------------------------------------------------------------------------------- NeMo, torchtitan, others


def test_nemo_finding_no_checkpoint_to_resume_from_is_a_missing_checkpoint(tmp_path):
    line = (
        "nemo.utils.exp_manager.NotFoundError: There were no checkpoints found in checkpoint_dir or no checkpoint "
        "folder at checkpoint_dir :/results/checkpoints. Cannot resume."
    )
    assert answer(tmp_path, line + "\n") == ("checkpoint_missing", CRASH, APP, STOP)


def test_nemo_training_from_scratch_without_a_checkpoint_stays_no_failure(tmp_path):
    line = (
        "[NeMo W 2026-12-01 05:00:00 exp_manager:999] There were no checkpoints found in checkpoint_dir or no "
        "checkpoint folder at checkpoint_dir :/results/checkpoints. Training from scratch."
    )
    assert kind_of(tmp_path, line) is NONE


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # torchtitan 0.3.0 checkpointer/dcp.py
        (
            "FileNotFoundError: --checkpoint.load_step=1000 not found at ./outputs/checkpoint/step-1000",
            ("python_file_not_found", CRASH, APP, STOP),
        ),
        # mosaicml-streaming 0.13.0 base/dataset.py: a shard missing from the remote and the local cache
        (
            "RuntimeError: [Errno 2] No such file or directory: '/tmp/streaming/train/shard.00042.mds'. Check if "
            "the shard file exists in your remote location or have you deleted the shard file from the local "
            "directory?",
            ("python_exception", CRASH, APP, STOP),
        ),
        # colossalai 0.5.0 checkpoint_io_base.py
        ("ValueError: Cannot find index file in /ckpt/colossal/epoch0", ("python_exception", CRASH, APP, STOP)),
        # the errno texts under any checkpoint writer
        (
            "OSError: [Errno 122] Disk quota exceeded: '/ckpt/step-1000/__0_0.distcp'",
            ("storage_no_space", CRASH, INFRA, STOP),
        ),
    ],
)
def test_checkpoint_and_shard_errors_the_generic_rules_already_answer_right(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: DataLoader timed out after 30 seconds", ("dataloader_timeout", FailureKind.HANG)),
        (
            "RuntimeError: DataLoader worker (pid(s) 4242, 4243) exited unexpectedly",
            ("dataloader_worker_killed", CRASH),
        ),
    ],
)
def test_torchdatas_stateful_dataloader_repeats_torchs_texts_and_reads_the_same(tmp_path, line, expected):
    """torchdata 0.11.0 stateful_dataloader.py raises the texts of torch's DataLoader (the ninth pass read them)."""
    assert answer(tmp_path, line + "\n")[:2] == expected


def test_webdataset_warning_and_continuing_past_a_shard_stays_no_failure(tmp_path):
    """handlers.py warn_and_continue: warnings.warn(repr(exn)), and the pipeline goes on."""
    line = (
        "/usr/lib/python3/dist-packages/webdataset/handlers.py:55: UserWarning: OSError(\"(('pipe:curl -s -L "
        "https://storage.example.com/shard-000042.tar',), {'shell': True, 'bufsize': 8192}): exit 22 (read) {}\")"
    )
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------------------- torchft


@pytest.mark.parametrize(
    "line",
    [
        "[replica_0/0 - step 120] got exception in all reduce -- skipping remaining: NCCL communicator was aborted "
        "on rank 3.",
        "[replica_0/0 - step 120] got exception in future -- skipping remaining: Connection reset by peer",
        "[replica_1/2 - step 7] got exception in pg configure: Socket Timeout",
        "[replica_1/2 - step 7] got exception in recovery: timed out after 60 seconds",
    ],
)
def test_torchft_reporting_an_error_it_heals_stays_no_failure(tmp_path, line):
    """manager.py: report_error, the step is not committed and the next quorum heals the replica group."""
    assert kind_of(tmp_path, line) is NONE


def test_torchft_giving_up_after_its_commit_retries_is_still_a_failure(tmp_path):
    line = "RuntimeError: should_commit failed 4 times consecutively, exceeding max_retries=3"
    assert kind_of(tmp_path, line) is CRASH


# ------------------------------------------------------------------------------------------------- the prefilter

ELEVENTH_PASS_KEYWORDS = {
    "object_store_unavailable": ["HTTPError: ", "ErrorCode:"],
    "object_store_request_refused": [
        "HTTPError: ",
        "ErrorCode:",
        "RepositoryNotFoundError: ",
        "GatedRepoError: ",
        "RevisionNotFoundError: ",
        "EntryNotFoundError: ",
        "DisabledRepoError: ",
    ],
    "remote_request_failed": [
        "An error happened while trying to locate the file on the Hub",
        "ServiceRequestError: ",
        "ServiceResponseError: ",
        "ServiceRequestTimeoutError: ",
        "ServiceResponseTimeoutError: ",
        "We couldn't connect to '",
        "FSTimeoutError",
    ],
    "checkpoint_corrupt": ["Error while deserializing header"],
    "checkpoint_missing": [
        "There were no checkpoints found in checkpoint_dir",
        "Missing key in checkpoint state_dict",
        "Size mismatch between saved",
        "File does not contain tensor",
    ],
    "dcp_checkpoint_exception": ["CheckpointException ranks:"],
}


@pytest.mark.parametrize(("signature_id", "keywords"), sorted(ELEVENTH_PASS_KEYWORDS.items()))
def test_the_eleventh_pass_keywords_start_with_a_capital_so_the_prefilter_stops_nowhere_new(signature_id, keywords):
    """A keyword starting with a lower-case letter makes the prefilter stop at many positions of healthy lines
    (docs/adding-a-signature.md); the benign entries' keywords are not in the prefilter."""
    held = default_catalogue().get(signature_id).keywords
    assert set(keywords) <= set(held)
    assert all(k[0].isupper() for k in keywords), keywords
