"""TelemetryLeaseWorkflow: one per cluster (id ``lazarus-<cluster>-telemetry-lease``).

Several telemetry replicas may run; exactly one runs the telemetry loop, the one holding this lease.
A replica asks for it with the update ``acquire``; the validator refuses while another holder's term
lasts, so a refused request leaves no history. The holder ``renew``s every few seconds, sending the
log offsets whose lines have all reached the job workflows; a standby keeps asking and is granted a new
term (``epoch`` + 1) once the holder's has expired, with those offsets. A holder that stops cleanly
``release``s the lease, so a standby takes over at once. Expiry is judged by workflow time only.

The workflow does nothing but answer these updates; it continues as new when its history grows long,
carrying its whole state, and is served by the telemetry replicas themselves (their task queue), so
the lease works as long as one of them runs.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from lazarus.models import names
    from lazarus.models.lease import LeaseGrant, LeaseRequest, LeaseState, LeaseView
    from workflows import lease_rules


@workflow.defn(name=names.TELEMETRY_LEASE_WORKFLOW)
class TelemetryLeaseWorkflow:
    @workflow.init
    def __init__(self, state: LeaseState) -> None:
        self.s = state

    @workflow.update(name=names.ACQUIRE_LEASE)
    def acquire(self, req: LeaseRequest) -> LeaseGrant:
        grant = lease_rules.acquire(self.s, req, workflow.now())
        workflow.logger.info(f"telemetry lease: term {grant.epoch} granted to {grant.holder}")
        return grant

    @acquire.validator
    def _validate_acquire(self, req: LeaseRequest) -> None:
        if refusal := lease_rules.acquire_refusal(self.s, req, workflow.now()):
            raise ValueError(refusal)

    @workflow.update(name=names.RENEW_LEASE)
    def renew(self, req: LeaseRequest) -> LeaseGrant:
        return lease_rules.renew(self.s, req, workflow.now())

    @renew.validator
    def _validate_renew(self, req: LeaseRequest) -> None:
        if refusal := lease_rules.term_refusal(self.s, req, workflow.now()):
            raise ValueError(refusal)

    @workflow.update(name=names.RELEASE_LEASE)
    def release(self, req: LeaseRequest) -> None:
        lease_rules.release(self.s, req)
        workflow.logger.info(f"telemetry lease: term {req.epoch} of {req.holder} released")

    @release.validator
    def _validate_release(self, req: LeaseRequest) -> None:
        if refusal := lease_rules.term_refusal(self.s, req, workflow.now()):
            raise ValueError(refusal)

    @workflow.query(name=names.LEASE_VIEW)
    def view(self) -> LeaseView:
        return LeaseView(
            cluster=self.s.cluster,
            holder=self.s.holder,
            epoch=self.s.epoch,
            expires_at=self.s.expires_at,
            saved_offsets=len(self.s.offsets),
            handovers=list(self.s.handovers),
        )

    @workflow.run
    async def run(self, state: LeaseState) -> None:
        info = workflow.info
        await workflow.wait_condition(
            lambda: info().is_continue_as_new_suggested() or info().get_current_history_length() >= self.s.history_limit
        )
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.s)
