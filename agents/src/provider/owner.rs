//! A lease owner's commands: suspend and cancel (its `Resume` settles the parked lease, see `migration`).

use super::Provider;
use crate::model::{JobId, PreemptionKind};
use crate::protocol::{LeaseMsg, Msg};
use crate::sim::{AgentId, Ctx};

impl Provider {
    /// The owner suspends its lease (Amini Salehi 2012, §3.3, the DVE's control of its leases): a running lease's VMs
    /// are suspended, a queued lease leaves the queue, and it waits out of the scheduler until the owner sends `Resume`
    /// (or `Job::Cancel`).
    pub(super) fn on_suspend(&mut self, id: JobId, from: AgentId, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(job) = self.jobs.get_mut(&id) else { return };
        if job.spec.owner != from || job.reservation.is_some() || self.preemption.parked.contains_key(&id) {
            tracing::warn!(
                provider = ctx.name(),
                lease = id,
                "suspend refused: not a running or queued lease of the sender"
            );
            return;
        }
        let (owner, vms) = (job.spec.owner, job.spec.pes);
        let (evicted, remaining, overhead, started) = match job.start {
            Some(start) => {
                let Ok((evicted, started)) = self.scheduler.suspend(now, id) else { return };
                if let Some(timer) = job.end_timer.take() {
                    ctx.cancel(timer);
                }
                self.busy_now -= vms;
                let memory_mb = job.spec.memory_mb.unwrap_or(self.config.vm_memory_mb);
                let overhead = self.config.overhead.overhead(PreemptionKind::Suspend, vms, memory_mb);
                let remaining = (job.runtime - (now - start)).min(evicted.estimate);
                job.pause(now);
                job.preempted = true;
                (evicted, remaining, overhead, started)
            }
            None => {
                let Ok((evicted, started)) = self.scheduler.remove(now, id) else { return };
                self.waiting_now -= 1;
                (evicted, job.runtime, 0.0, started)
            }
        };
        self.preemption.stats.owner_suspends += 1;
        ctx.send(owner, Msg::Lease(LeaseMsg::Preempted { lease: id, kind: PreemptionKind::Suspend, overhead }));
        self.preemption.parked.insert(id, (evicted, remaining, overhead));
        self.start(started, ctx);
        self.after_event(ctx);
    }

    /// The owner withdraws a job: a queued one leaves the queue, a running one stops; either pays for what it
    /// computed here.
    pub(super) fn on_cancel(&mut self, id: JobId, from: AgentId, ctx: &mut Ctx<'_>) {
        if self.ahead.get(&id).is_some_and(|job| job.owner == from) {
            // A local request made ahead, not placed yet: nothing holds or runs for it.
            self.ahead.remove(&id);
            ctx.send(from, Msg::Lease(LeaseMsg::Cancelled { lease: id, cost: 0.0 }));
            return self.after_event(ctx);
        }
        let Some(job) = self.jobs.get(&id) else { return };
        if job.spec.owner != from {
            tracing::warn!(provider = ctx.name(), job = id, "cancel from an agent that does not own the job: ignored");
            return;
        }
        let mut job = self.jobs.remove(&id).expect("just found");
        let now = ctx.now();
        if self.preemption.parked.remove(&id).is_some() {
            // Out of the scheduler already: nothing runs or waits there.
            let cost = self.bill(&job, job.computed, ctx);
            ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Cancelled { lease: id, cost }));
            return self.after_event(ctx);
        }
        let result = match (job.start, job.reservation) {
            // Waiting for its reserved slot: give the slot back.
            (None, Some(r)) => {
                self.waiting_now -= 1;
                self.scheduler.cancel_reservation(now, r)
            }
            (None, None) => {
                self.waiting_now -= 1;
                self.scheduler.remove(now, id).map(|(_, started)| started)
            }
            (Some(_), _) => {
                self.busy_now -= job.spec.pes;
                if let Some(timer) = job.end_timer {
                    ctx.cancel(timer);
                }
                job.pause(now);
                match job.reservation {
                    Some(r) => self.scheduler.cancel_reservation(now, r),
                    None => self.scheduler.complete(now, id),
                }
            }
        };
        let cost = self.bill(&job, job.computed, ctx);
        ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Cancelled { lease: id, cost }));
        match result {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), job = id, "scheduler refused cancellation: {e}"),
        }
        self.after_event(ctx);
    }
}
