//! A job's life cycle at the provider: submission and admission, start, end, and the scheduler's wake-ups.

use super::scheduler::{QueuedJob, Rejected, Started};
use super::{LocalJob, MoldedDeadline, Provider};
use crate::model::{JobId, LeaseType};
use crate::protocol::{JobMsg, JobSpec, LeaseMsg, Msg, TimerMsg};
use crate::sim::{AgentId, Ctx, SimTime};

impl Provider {
    /// Queues a job (or serves a local request at once); answers `Accepted` (then `Started` when it starts) or
    /// `Rejected`; an external request its admission control refuses goes back to the gateway as `Refused`. A request
    /// a gateway `reoffer`s after another provider refused it: the gateway hears the answer too.
    pub(super) fn on_submit(&mut self, mut job: JobSpec, from: AgentId, reoffer: bool, ctx: &mut Ctx<'_>) {
        let (id, owner) = (job.id, job.owner);
        let external = from != owner;
        // A refused request goes back as submitted, to be molded anew wherever the gateway offers it next.
        let submitted = (self.moldable.is_some() && external).then(|| job.clone());
        if let Some(deadline) = self.moldable {
            self.mold(&mut job, deadline, ctx.now());
        }
        if let Err(reason) = self.admission_control(&job, external, ctx.now()) {
            self.rejected += 1;
            let job = Box::new(submitted.unwrap_or(job));
            ctx.send(from, Msg::Job(JobMsg::Refused { job, reason: reason.into() }));
            return self.after_event(ctx);
        }
        let admitted = match job.lease {
            Some(LeaseType::Local) => return self.on_local_request(job, ctx),
            Some(LeaseType::Migratable | LeaseType::NonPreemptable) => self.admit_by_deadline(job, ctx.now()),
            _ => self.admit(job, ctx.now()),
        };
        match admitted {
            Ok(started) => {
                self.accepted += 1;
                if external && let Some(job) = self.jobs.get_mut(&id) {
                    job.via = Some(from);
                    self.externals.hold(id);
                }
                ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
                if reoffer {
                    ctx.send(from, Msg::Job(JobMsg::Accepted { job: id }));
                }
                self.start(started, ctx);
                if self.config.preemptive_priority {
                    self.preemption.arrivals.push(id);
                }
            }
            Err(reason) => {
                self.rejected += 1;
                self.pricing.refused();
                if reoffer {
                    ctx.send(from, Msg::Job(JobMsg::Rejected { job: id, reason: reason.clone() }));
                }
                ctx.send(owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
            }
        }
        self.after_event(ctx);
    }

    /// Spreads a moldable request's work over every PE of the cluster; its deadline as `deadline` says.
    fn mold(&self, job: &mut JobSpec, deadline: MoldedDeadline, now: SimTime) {
        let share = f64::from(job.pes) / f64::from(self.config.pes);
        (job.pes, job.runtime, job.estimate) = (self.config.pes, job.runtime * share, job.estimate * share);
        if let (MoldedDeadline::Scaled, Some(d)) = (deadline, job.deadline) {
            job.deadline = Some(now + (d - now).max(0.0) * share / self.config.speed);
        }
    }

    /// An external request passes the admission control, if any (`Err` with the reason when refused); a local one
    /// feeds its estimates.
    fn admission_control(&mut self, job: &JobSpec, external: bool, now: SimTime) -> Result<(), String> {
        let runtime = self.config.scaled(job.runtime);
        let (jobs, parked) = (&self.jobs, &self.preemption.parked);
        let here = |id| jobs.contains_key(&id) || parked.contains_key(&id);
        self.externals.control(runtime, external, now, here)
    }

    /// A deadline-constrained lease is queued only if its planned completion meets its deadline.
    pub(super) fn admit_by_deadline(&mut self, job: JobSpec, now: SimTime) -> Result<Vec<Started>, String> {
        if let Some(deadline) = job.deadline {
            let estimate = self.config.planned_duration(&job);
            let start = self.scheduler.earliest_start(now, job.pes, estimate, None).map_err(|e| e.to_string())?;
            if start + estimate > deadline {
                return Err(format!("cannot complete before its deadline (earliest start {start})"));
            }
        }
        self.admit(job, now)
    }

    /// Queues a job with the scheduler; returns what starts now (the caller counts it as accepted and answers the
    /// owner first).
    pub(super) fn admit(&mut self, job: JobSpec, now: SimTime) -> Result<Vec<Started>, String> {
        let runtime = self.config.scaled(job.runtime);
        let estimate = self.config.planned_duration(&job);
        let queued =
            QueuedJob { id: job.id, submit: now, pes: job.pes, estimate, partition: None, priority: job.priority };
        let id = job.id;
        self.note_arrival(id, now, estimate);
        let started = self.scheduler.submit(now, queued).map_err(|e| e.to_string())?;
        self.waiting_now += 1;
        self.jobs.insert(id, LocalJob::new(job, runtime, None));
        Ok(started)
    }

    /// Jobs the scheduler started now: tell their owners (`Started`, or `Resumed` after a preemption) and set the
    /// timers that end them.
    pub(super) fn start(&mut self, started: Vec<Started>, ctx: &mut Ctx<'_>) {
        for s in started {
            self.note_start(s.id, ctx.now());
            let Some(job) = self.jobs.get_mut(&s.id) else { continue };
            job.start = Some(ctx.now());
            self.busy_now += job.spec.pes;
            self.waiting_now -= 1;
            let msg = if job.preempted {
                Msg::Lease(LeaseMsg::Resumed { lease: s.id })
            } else {
                Msg::Job(JobMsg::Started { job: s.id })
            };
            ctx.send(job.spec.owner, msg);
            job.end_timer = Some(ctx.wake_in(job.runtime, TimerMsg::JobEnd { job: s.id }));
        }
    }

    /// A job's runtime elapsed: free its PEs, bill its owner, start what can start.
    pub(super) fn on_job_end(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.remove(&id) else { return };
        self.busy_now -= job.spec.pes;
        self.charge_lease(&job, ctx.now());
        // This run went its whole runtime, its overhead first.
        let cost = self.bill(&job, job.computed + job.work, ctx);
        self.completed += 1;
        ctx.send(job.spec.owner, Msg::Job(JobMsg::Completed { job: id, cost }));
        let now = ctx.now();
        if job.via.is_some() {
            self.externals.completed(id, job.spec.deadline.is_none_or(|d| now <= d));
        }
        let freed = match job.reservation {
            Some(r) => match self.scheduler.cancel_reservation(now, r) {
                // A local lease ends with its window, which the scheduler may already have closed this instant.
                Err(Rejected::UnknownReservation(_)) => Ok(self.scheduler.tick(now)),
                other => other,
            },
            None => self.scheduler.complete(now, id),
        };
        match freed {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), job = id, "scheduler refused completion: {e}"),
        }
        self.power_after_this_instant(ctx);
        self.after_event(ctx);
    }

    /// The scheduler's wake-up: start what is due.
    pub(super) fn on_wakeup(&mut self, ctx: &mut Ctx<'_>) {
        self.wakeup = None;
        let started = self.scheduler.tick(ctx.now());
        self.start(started, ctx);
        self.power_after_this_instant(ctx);
        self.after_event(ctx);
    }

    /// Records the state series, asks for the end of the instant when the scheduler's pass is due, and keeps
    /// exactly one wake-up pending at the scheduler's next due time.
    pub(super) fn after_event(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        if self.scheduler.pass_pending() || !self.preemption.arrivals.is_empty() {
            ctx.at_end_of_instant();
        }
        self.arm_power_check(ctx);
        self.busy.set(now, f64::from(self.busy_now));
        self.queued.set(now, f64::from(self.waiting_now));
        // The holds of switched-off nodes end past any run: their end wakes nothing.
        let due = self.scheduler.next_wakeup().filter(|&t| t > now && !self.is_power_horizon(t));
        if self.wakeup.map(|w| w.0) != due {
            if let Some((_, timer)) = self.wakeup.take() {
                ctx.cancel(timer);
            }
            if let Some(t) = due {
                self.wakeup = Some((t, ctx.wake_in(t - now, TimerMsg::Wakeup)));
            }
        }
    }
}
