"""Throughput of `lazarus diagnose` on a 1 GB realistic training log.

Generates, in a temporary directory, a log of mostly healthy multi-rank
training output (Megatron iteration lines, NCCL INFO set-up, warnings, loss
scale overflows, data-loader chatter) with a real failure near the end (an Xid
79 on one node followed by victims on the others), then runs
``lazarus diagnose --json`` on it pinned to one CPU core and reports wall time,
throughput and the child's peak RSS. Not part of the test suite (it takes a
minute and a gigabyte of disk).

    .venv/bin/python benchmarks/diagnose_throughput.py [--size-mb 1024] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEALTHY = [
    "{r}: [2024-05-01 {h:02d}:{m:02d}:{s:02d}] iteration {it:>8}/ 1000000 | consumed samples: {cs:>12} | elapsed time "
    "per iteration (ms): {ms:.1f} | learning rate: 2.999E-04 | global batch size:   512 | lm loss: {loss:.6E} | loss "
    "scale: 1.0 | grad norm: {gn:.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |",
    "{r}: [2024-05-01 {h:02d}:{m:02d}:{s:02d}] INFO data/loader.py:412 shard {it} prefetched 2048 samples in {ms:.1f} ms",
    "{r}: [2024-05-01 {h:02d}:{m:02d}:{s:02d}] INFO throughput tokens/s/gpu={tok} mfu={mfu:.3f} mem_alloc_gb=61.2",
    "node{n}:{pid}:{pid} [{g}] NCCL INFO Channel {c:02d}/32 : {r} -> {r2} [send] via NET/IB/0/GDRDMA",
    "{r}: {{'loss': {loss:.4f}, 'grad_norm': {gn:.3f}, 'learning_rate': 2.9e-04, 'epoch': 0.{it}}}",
    "{r}: /opt/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:600: UserWarning: recompiling "
    "function forward due to shape change",
    "{r}: [2024-05-01 {h:02d}:{m:02d}:{s:02d}] [deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: "
    "65536, reducing to 32768",
]
WEIGHTS = [70, 10, 10, 4, 3, 2, 1]
FAILURE = [
    "May  1 23:59:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "13: RuntimeError: CUDA error: unspecified launch failure",
    "0: [rank0]:[E501 23:59:40.1 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=99, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.",
    "2: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
]


def _block(rng: random.Random, start_iteration: int, lines: int) -> str:
    out = []
    templates = rng.choices(HEALTHY, weights=WEIGHTS, k=lines)
    for offset, template in enumerate(templates):
        it = start_iteration + offset
        r = rng.randrange(16)
        out.append(
            template.format(
                r=r,
                r2=(r + 1) % 16,
                n=r // 2 + 1,
                g=r % 2,
                pid=4000 + r,
                c=it % 32,
                it=it,
                cs=it * 512,
                h=(it // 3600) % 24,
                m=(it // 60) % 60,
                s=it % 60,
                ms=1200 + rng.random() * 80,
                loss=2.0 + rng.random(),
                gn=rng.random(),
                tok=31000 + rng.randrange(2000),
                mfu=0.4 + rng.random() / 20,
            )
        )
    return "\n".join(out) + "\n"


def generate(path: Path, size_bytes: int, seed: int = 1) -> int:
    """Write about ``size_bytes`` of healthy output, then the failure; return the line count."""
    rng = random.Random(seed)
    written = lines = 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < size_bytes:
            text = _block(rng, lines, 20_000)
            handle.write(text)
            written += len(text.encode())
            lines += 20_000
        handle.write("\n".join(FAILURE) + "\n")
        handle.write(_block(rng, lines, 200))
    return lines + len(FAILURE) + 200


def measure(path: Path) -> dict:
    lazarus = Path(sys.executable).with_name("lazarus")
    command = [str(lazarus), "diagnose", "--json", "--nodes", "node[1-8]", "--tasks-per-node", "2", str(path)]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]  # one core, as the target is stated
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"lazarus diagnose failed: {err}")
    result = json.loads(out)
    return {
        "seconds": elapsed,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "signature": result["signature"],
        "implicated_nodes": result["implicated_nodes"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lazarus-bench-"))
    try:
        path = workdir / "slurm-1234.out"
        t0 = time.perf_counter()
        lines = generate(path, args.size_mb << 20)
        size = path.stat().st_size
        print(f"generated {size / 2**20:.0f} MiB, {lines} lines in {time.perf_counter() - t0:.1f} s: {path}")
        report = measure(path)
        print(
            f"lazarus diagnose: {report['seconds']:.1f} s wall, {report['cpu_seconds']:.1f} s CPU, "
            f"{size / 2**20 / report['seconds']:.0f} MiB/s, peak RSS {report['peak_rss_mb']:.0f} MiB"
        )
        print(f"verdict: {report['signature']} on {report['implicated_nodes']}")
        ok = report["seconds"] < 30 and report["signature"] == "xid_79_fallen_off_bus"
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
