"""A minimal Prometheus remote-write client for tests: protobuf WriteRequest, snappy block compression.

Hand-encoded (about twenty lines) rather than generated: the message is
``WriteRequest{repeated TimeSeries timeseries = 1}``, ``TimeSeries{repeated
Label labels = 1; repeated Sample samples = 2}``, ``Label{string name = 1;
string value = 2}``, ``Sample{double value = 1; int64 timestamp = 2}`` (ms).
Labels must be sorted by name and samples pushed oldest first, or Prometheus
answers 400 (out of order).
"""

from __future__ import annotations

import struct
import urllib.request
from collections.abc import Iterable, Sequence

import cramjam

Series = tuple[dict[str, str], Sequence[tuple[int, float]]]  # (labels incl. __name__, [(ts_ms, value)])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _sample(value: float, ts_ms: int) -> bytes:
    return b"\x09" + struct.pack("<d", value) + b"\x10" + _varint(ts_ms)  # field 1 double, field 2 varint


def encode(series: Iterable[Series]) -> bytes:
    body = bytearray()
    for labels, samples in series:
        ts = b"".join(_field(1, _field(1, k.encode()) + _field(2, labels[k].encode())) for k in sorted(labels))
        ts += b"".join(_field(2, _sample(v, t)) for t, v in samples)
        body += _field(1, ts)
    return bytes(body)


def push(base_url: str, series: Iterable[Series]) -> None:
    """POST to ``/api/v1/write``; raises ``urllib.error.HTTPError`` with Prometheus's reason on rejection."""
    request = urllib.request.Request(
        f"{base_url}/api/v1/write",
        data=bytes(cramjam.snappy.compress_raw(encode(series))),
        method="POST",
        headers={
            "Content-Encoding": "snappy",
            "Content-Type": "application/x-protobuf",
            "X-Prometheus-Remote-Write-Version": "0.1.0",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204, response.status
