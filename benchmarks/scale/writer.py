"""The simulated jobs' output: one process writing every running job's log at a training job's rates.

    python -m benchmarks.scale.writer --progress-every 10 --checkpoint-every 1800

Commands on stdin, one per line (the benchmark sends them; this process never reads the scheduler):

- ``start <job_id> <attempt> <path> <node>``: the attempt runs: a progress line (``LAZARUS step=...``, as
  :func:`lazarus.progress.report` prints it) every ``--progress-every`` seconds, at a phase of its own, and a
  checkpoint every ``--checkpoint-every`` seconds, at a random phase; a harmless INFO line with every progress line;
- ``crash <job_id> <node>[,<node>...]``: the job prints what an Xid 79 prints (the kernel line naming each node, then
  the CUDA error) and stops writing; the time of the write is answered on stdout as ``crashed <job_id> <epoch>``;
- ``stop <job_id>``: the job stops writing (it ended).

Files are opened, appended and closed for every write (10,000 jobs would need 10,000 descriptors otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lazarus.progress import format_line

XID_LINE = "[{ts:.3f}] {node} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus."


@dataclass
class Job:
    """One running attempt's writer state."""

    path: Path
    node: str
    attempt: int
    step: int = 0
    next_checkpoint: float = 0.0
    generation: int = field(default=0)


class Writer:
    """Keeps the running jobs and writes their lines when due (a heap of next-write times)."""

    def __init__(self, progress_every: float, checkpoint_every: float, seed: int) -> None:
        self.progress_every, self.checkpoint_every = progress_every, checkpoint_every
        self.jobs: dict[int, Job] = {}
        self.due: list[tuple[float, int, int]] = []  # (when, job_id, generation)
        self.rng = random.Random(seed)
        self.lines = 0

    def start(self, job_id: int, attempt: int, path: Path, node: str) -> None:
        now = time.time()
        old = self.jobs.get(job_id)
        job = Job(path=path, node=node, attempt=attempt, generation=(old.generation + 1) if old else 0)
        job.step = old.step if old else 0
        job.next_checkpoint = now + self.rng.uniform(0, self.checkpoint_every)
        self.jobs[job_id] = job
        self._append(job, f"rank 0 on {node}: attempt {attempt}, resuming from step {job.step}")
        heapq.heappush(self.due, (now + self.rng.uniform(0, self.progress_every), job_id, job.generation))

    def crash(self, job_id: int, node: str) -> float:
        job = self.jobs.pop(job_id, None)
        ts = time.time()
        if job is not None:
            xids = [XID_LINE.format(ts=ts, node=name) for name in node.split(",")]
            self._append(job, *xids, "RuntimeError: CUDA error: unspecified launch failure")
        return ts

    def stop(self, job_id: int) -> None:
        self.jobs.pop(job_id, None)

    def write_due(self) -> float:
        """Write every line that is due; returns the seconds until the next one."""
        now = time.time()
        while self.due and self.due[0][0] <= now:
            _, job_id, generation = heapq.heappop(self.due)
            job = self.jobs.get(job_id)
            if job is None or job.generation != generation:
                continue
            job.step += 1
            checkpoint = None
            if now >= job.next_checkpoint:
                checkpoint, job.next_checkpoint = job.step, now + self.checkpoint_every
            loss = round(4.0 / (1 + job.step * 0.01), 4)
            progress = format_line(step=job.step, loss=loss, samples_per_s=512.0, checkpoint=checkpoint)
            self._append(job, "NCCL INFO comm 0x5581 rank 0 nranks 16 - Init COMPLETE", progress)
            heapq.heappush(self.due, (now + self.progress_every, job_id, generation))
        return max(0.01, self.due[0][0] - time.time()) if self.due else 0.2

    def _append(self, job: Job, *lines: str) -> None:
        with job.path.open("a") as out:
            out.write("".join(f"{line}\n" for line in lines))
        self.lines += len(lines)


async def serve(writer: Writer) -> None:
    """Read commands from stdin while writing lines when due."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pending: asyncio.Task[bytes] | None = None
    while True:
        pending = pending or asyncio.ensure_future(reader.readline())
        done, _ = await asyncio.wait({pending}, timeout=writer.write_due())
        if not done:
            continue
        raw, pending = pending.result(), None
        if not raw:
            return  # the benchmark has gone
        words = raw.decode().split()
        if words[0] == "start":
            writer.start(int(words[1]), int(words[2]), Path(words[3]), words[4])
        elif words[0] == "crash":
            ts = writer.crash(int(words[1]), words[2])
            print(f"crashed {words[1]} {ts:.6f}", flush=True)
        elif words[0] == "stop":
            writer.stop(int(words[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--progress-every", type=float, default=10.0)
    parser.add_argument("--checkpoint-every", type=float, default=1800.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(serve(Writer(args.progress_every, args.checkpoint_every, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
