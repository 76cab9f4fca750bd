//! Lease migration through a gateway: leases arriving from another provider, and parked leases settled (moved
//! away, or resumed here).

use super::Provider;
use crate::model::JobId;
use crate::protocol::{LeaseMsg, MarketMsg, Migration, Msg};
use crate::sim::{AgentId, Ctx};

impl Provider {
    /// A gateway offers a lease migrating from another provider: take it if it can run here (before its deadline),
    /// with the migration overhead on its VMs.
    pub(super) fn on_migrate_in(&mut self, migration: &Migration, gateway: AgentId, ctx: &mut Ctx<'_>) {
        let Migration { lease, overhead, .. } = migration;
        let id = lease.id;
        let mut planned = lease.clone();
        // The destination plans with the resume overhead included: its VMs are busy for it.
        planned.estimate += overhead * self.config.speed;
        let estimate = self.config.planned_duration(&planned);
        let answer = match self.admit_by_deadline(planned, ctx.now()) {
            Ok(started) => {
                self.preemption.stats.migrated_in += 1;
                let job = self.jobs.get_mut(&id).expect("just admitted");
                // Rounded otherwise than the scheduler's estimate, the runtime can exceed it by an ulp when the speed
                // is not 1, and the job would end after the end its PEs are planned free at.
                let work = job.runtime;
                job.plan((work + overhead).min(estimate), *overhead, work);
                (job.preempted, job.via) = (true, Some(gateway));
                self.preemption.stats.overhead_pe_seconds += f64::from(lease.pes) * overhead;
                self.start(started, ctx);
                LeaseMsg::Migrated { lease: id, to: ctx.me() }
            }
            Err(reason) => {
                tracing::debug!(provider = ctx.name(), lease = id, reason, "migration refused");
                LeaseMsg::MigrateRefused { lease: id }
            }
        };
        ctx.send(gateway, Msg::Lease(answer));
        self.after_event(ctx);
    }

    /// A parked lease moved to another provider (`moved`, the gateway's `Migrated`) or resumes here (`Resume`
    /// from the gateway that found no destination, or from the owner that suspended it).
    pub(super) fn settle_parked(&mut self, id: JobId, moved: bool, from: AgentId, ctx: &mut Ctx<'_>) {
        let entitled = self.jobs.get(&id).is_some_and(|j| j.via == Some(from) || (!moved && j.spec.owner == from));
        if !entitled {
            tracing::warn!(provider = ctx.name(), lease = id, "only the lease's gateway or owner settles it: ignored");
            return;
        }
        let Some((evicted, remaining, overhead)) = self.preemption.parked.remove(&id) else { return };
        if moved {
            self.preemption.stats.migrated_out += 1;
            // What it computed here is billed here: the destination bills the rest.
            let job = self.jobs.remove(&id).expect("entitled");
            let amount = self.bill(&job, job.computed, ctx);
            if amount > 0.0 {
                ctx.send(job.spec.owner, Msg::Market(MarketMsg::Invoice { job: id, amount }));
            }
        } else {
            self.resume_here(evicted, remaining, overhead, ctx);
        }
        self.after_event(ctx);
    }
}
