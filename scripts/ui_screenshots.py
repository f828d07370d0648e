"""Regenerate the Temporal UI screenshots in docs/img (docs/operator-guide.md shows them) with headless Chromium.

    .venv/bin/lazarus dev up && .venv/bin/lazarus demo        # a recovered job on the dev stack
    .venv/bin/python scripts/ui_screenshots.py                 # the newest recovered job of the dev stack
    .venv/bin/python scripts/ui_screenshots.py --job 12 --config /path/lazarus.yaml --out /tmp/img

It reads the same configuration as the CLI (``--config``, ``$LAZARUS_CONFIG``, else the dev stack's), finds the
job's workflow on Temporal (by default the newest completed job workflow with more than one attempt: a job that
Lazarus recovered) and renders two tabs of its page in the UI at ``temporal.ui_url``: the user metadata (static
summary and details, current details) and the timeline (the named signals, the recovery's activities and
timers, in order). Chromium is the Debian package (``make deps``); the job's workflow must have closed (an open
workflow's page long-polls and never settles, see lazarus/devstack/browser.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from temporalio.client import Client, WorkflowHandle  # noqa: E402

from lazarus.cli.common import settings_from  # noqa: E402
from lazarus.devstack.browser import run_url, screenshot  # noqa: E402
from lazarus.models import names  # noqa: E402
from lazarus.temporal_client import connect  # noqa: E402

OUT = REPO / "docs" / "img"
PAGES = {  # file name: (tab, window size)
    "ui-job-metadata.png": ("user-metadata", (1440, 860)),
    "ui-job-timeline.png": ("timeline", (1440, 1750)),
}
RECOVERED = f"WorkflowType = '{names.JOB_WORKFLOW}' AND ExecutionStatus = 'Completed' AND AttemptIndex > 0"


async def recovered_job(client: Client, cluster: str) -> WorkflowHandle:
    """The newest completed job workflow of ``cluster`` whose job ran more than one attempt."""
    async for wf in client.list_workflows(f"{RECOVERED} AND LazarusCluster = '{cluster}'", limit=1):
        return client.get_workflow_handle(wf.id, run_id=wf.run_id)
    raise SystemExit(f"no completed job of cluster {cluster} was recovered; run `lazarus demo` first, or give --job")


async def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help="Lazarus configuration (default: as the CLI finds it)")
    p.add_argument("--job", type=int, help="the Slurm job id (default: the newest recovered job)")
    p.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go (default: {OUT.relative_to(REPO)})")
    args = p.parse_args(argv)
    settings = settings_from(args)
    client = await connect(settings)
    if args.job is None:
        handle = await recovered_job(client, settings.cluster)
    else:
        handle = client.get_workflow_handle(names.workflow_id(settings.cluster, args.job))
    run_id = handle.run_id or (await handle.describe()).run_id
    for name, (tab, window) in PAGES.items():
        url = run_url(settings.temporal.ui_url, settings.temporal.namespace, handle.id, run_id, tab)
        path = await asyncio.to_thread(screenshot, url, args.out / name, window)
        print(f"{path}: {url}")


if __name__ == "__main__":
    asyncio.run(main())
