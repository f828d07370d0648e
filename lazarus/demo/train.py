"""A small stand-in for a distributed training script, run by srun with one rank per node.

It behaves like a real trainer where Lazarus cares: every rank prints progress
lines, rank 0 saves checkpoints to a shared directory, and a restarted attempt
(``SLURM_RESTART_COUNT`` > 0) resumes from the newest checkpoint. Faults are
injected on request, realistically: the failing rank prints the kernel/driver
or library message a real failure prints, the other ranks print the errors
victims of a dead peer print, and the job dies.

    python -m lazarus.demo.train --steps 40 --ckpt-every 10 --ckpt-dir DIR \\
        --fault xid79 --fault-rank 1 --fault-step 15 --fault-attempts 0

With ``--fake-gpu-dir`` (the dev stack's fake NVML scripts, one directory per
node) a hardware fault also reaches the failing node's fake GPU first, as a real
one reaches the driver before the job sees it: the node agent reports the Xid
(or the ECC error), which corroborates the job's word when Lazarus drains the node.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from lazarus.demo.metrics import RankThroughput
from lazarus.devstack.fake_nvml import FakeGpuScript
from lazarus.progress import report

SAMPLES_PER_S = 512.0  # one healthy rank's compute-only throughput
FAULTS = ("none", "xid79", "ecc", "nccl-timeout", "app-error", "hang", "noisy", "node-fail", "straggler")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--step-time", type=float, default=0.25, help="seconds per step")
    p.add_argument("--ckpt-every", type=int, default=10)
    p.add_argument("--ckpt-dir", type=Path, required=True)
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--fault-rank", type=int, default=1, help="the rank whose GPU/process fails")
    p.add_argument("--fault-step", type=int, default=15)
    p.add_argument("--fault-attempts", default="0", help="comma-separated attempts that fault, or 'all'")
    p.add_argument(
        "--fake-gpu-dir",
        type=Path,
        help="the dev stack's fake NVML scripts (<dir>/<node>/): a hardware fault reaches the node's fake GPU too",
    )
    p.add_argument(
        "--metrics-sd-dir",
        type=Path,
        help="publish each rank's compute-only throughput for Prometheus, registered here (file_sd_configs)",
    )
    return p.parse_args(argv)


def newest_checkpoint(ckpt_dir: Path) -> int:
    steps = [int(p.stem.split("-")[1]) for p in ckpt_dir.glob("step-*.ckpt") if p.stem.split("-")[1].isdigit()]
    return max(steps, default=0)


def say(text: str) -> None:
    print(text, flush=True)


def break_gpu(fake_gpu_dir: Path | None, node: str, fault: str) -> None:
    """The hardware side of a fault: the node's fake GPU raises it, and its agent sees it at its next poll."""
    if fake_gpu_dir is None or not (fake_gpu_dir / node).is_dir():
        return
    gpus = FakeGpuScript(fake_gpu_dir / node)
    if fault == "xid79":
        gpus.xid(0, 79)
    else:
        gpus.set(0, "ecc_dbe_vol", 1)


def inject(fault: str, rank: int, node: str, step: int, on_fault_node: bool, fake_gpu_dir: Path | None = None) -> None:
    """Print what a real failure prints, then die (or hang) like it."""
    pci = "PCI:0000:3b:00"
    if fault in ("xid79", "ecc") and fake_gpu_dir is not None:
        if on_fault_node:
            break_gpu(fake_gpu_dir, node, fault)
        time.sleep(2.0)  # every rank: the agent (1 s polls) sees the fault before the job crashes on it
    if fault == "xid79":
        if on_fault_node:
            say(f"[{time.time():.3f}] {node} kernel: NVRM: Xid ({pci}): 79, pid=4242, GPU has fallen off the bus.")
            say("RuntimeError: CUDA error: unspecified launch failure")
            sys.exit(1)
        time.sleep(0.5)
        say(
            f"[rank{rank}]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank {rank}] NCCL watchdog thread terminated with "
            f"exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5 "
            f"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
        )
        sys.exit(1)
    if fault == "ecc" and on_fault_node:
        say("RuntimeError: CUDA error: uncorrectable ECC error encountered")
        sys.exit(1)
    if fault == "nccl-timeout" and on_fault_node:
        say(
            f"[rank{rank}]:[E ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={step * 3}, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) "
            "ran for 600031 milliseconds before timing out."
        )
        sys.exit(1)
    if fault == "app-error" and rank == 0:
        say("Traceback (most recent call last):")
        say('  File "train.py", line 88, in <module>')
        say("    batch = dataset[config['tokenizer_path']]")
        say("KeyError: 'tokenizer_path'")
        sys.exit(1)
    if fault == "hang":
        if rank == 0:
            say(f"[{time.time():.3f}] lazarus-demo: {node} stops progressing")
        while True:  # alive, silent: a hang, not a crash
            time.sleep(1)
    if fault == "node-fail":
        # the failing node says so (with its own timestamp) and waits to be killed -9 with its slurmd
        # (benchmarks/compare.py); every other rank blocks like a collective waiting on a dead peer
        if on_fault_node:
            say(f"[{time.time():.3f}] lazarus-demo: {node} ready to fail")
        while True:
            time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rank = int(os.environ.get("SLURM_PROCID", "0"))
    node = os.environ.get("SLURMD_NODENAME", "localhost")
    attempt = int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
    args.ckpt_dir.mkdir(parents=True, exist_ok=True)
    start = newest_checkpoint(args.ckpt_dir)
    faulting = args.fault_attempts == "all" or str(attempt) in args.fault_attempts.split(",")
    say(f"rank {rank} on {node}: attempt {attempt}, resuming from checkpoint {start}")
    throughput = None
    if args.metrics_sd_dir is not None:
        job_id = os.environ.get("SLURM_JOB_ID", "0")
        throughput = RankThroughput(args.metrics_sd_dir, job_id, node, rank)
        # scancel and a requeue stop the step with SIGTERM: exit through atexit, which unregisters the rank
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    slow = 1.0
    straggling = False
    for step in range(start + 1, args.steps + 1):
        # a step is the rank's own compute, then the collective that waits for the slowest rank
        compute_s = args.step_time * (2.0 if straggling else 1.0)
        time.sleep(args.step_time * slow)
        if throughput is not None:
            throughput.observe(SAMPLES_PER_S * args.step_time, compute_s)
        if faulting and args.fault == "straggler" and step == args.fault_step:
            # one node's ranks compute 2x slower; a synchronous job waits for them at every collective
            slow, straggling = 2.0, rank == args.fault_rank
            if straggling:
                say(f"[{time.time():.3f}] lazarus-demo: {node} is a straggler from step {step}")
        if faulting and args.fault not in ("none", "straggler") and step == args.fault_step:
            inject(args.fault, rank, node, step, rank == args.fault_rank, args.fake_gpu_dir)
        if args.fault == "noisy" and step % 5 == 0:
            say("NCCL INFO Channel 00/02 :    0   1")
            say("UserWarning: torch.distributed._all_gather_base is a private function and will be deprecated")
            say("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768")
        checkpoint = None
        if step % args.ckpt_every == 0:
            if rank == 0:
                (args.ckpt_dir / f"step-{step}.ckpt").write_text(str(step))
            checkpoint = step
        if rank == 0:
            loss = round(4.0 / (1 + step * 0.05), 4)
            report(
                step=step, total_steps=args.steps, loss=loss, samples_per_s=SAMPLES_PER_S / slow, checkpoint=checkpoint
            )
    say(f"rank {rank}: training finished at step {args.steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
