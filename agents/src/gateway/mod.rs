//! InterGrid gateway (seeds 000/001), basic form: holds its grid's providers and dispatches the external requests
//! it receives among them round robin, skipping providers too small for a request. Local users submit straight to
//! their provider. Providers answer the job's owner directly, so the gateway only forwards `Job::Submit`, or answers
//! `Job::Rejected` when no provider of its grid can ever run the job.

use serde::{Deserialize, Serialize};

use crate::kernel::{Agent, Ctx, Envelope, SimTime};
use crate::protocol::{JobMsg, Msg};
use crate::provider::ProviderInfo;
use crate::report::Report;

/// How the gateway picks a provider for each request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// Each request to the next provider in turn (RR of seed 000 ch4).
    #[default]
    RoundRobin,
}

/// The gateway agent.
pub struct Gateway {
    providers: Vec<ProviderInfo>,
    dispatch: Dispatch,
    next: usize,
    forwarded: u64,
    rejected: u64,
}

impl Gateway {
    /// A gateway over `providers`.
    pub fn new(providers: Vec<ProviderInfo>, dispatch: Dispatch) -> Gateway {
        Gateway { providers, dispatch, next: 0, forwarded: 0, rejected: 0 }
    }
}

impl Agent for Gateway {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        let Msg::Job(JobMsg::Submit(job)) = &env.msg else {
            tracing::error!(gateway = ctx.name(), kind = env.msg.kind(), "unhandled message");
            return;
        };
        let n = self.providers.len();
        let Dispatch::RoundRobin = self.dispatch;
        let pick = (0..n).map(|k| (self.next + k) % n).find(|&i| self.providers[i].pes >= job.pes);
        match pick {
            Some(i) => {
                self.next = (i + 1) % n;
                self.forwarded += 1;
                ctx.send(self.providers[i].id, env.msg.clone());
            }
            None => {
                self.rejected += 1;
                let reason = format!("no provider of this grid has {} PEs", job.pes);
                ctx.send(job.owner, Msg::Job(JobMsg::Rejected { job: job.id, reason }));
            }
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([("forwarded", self.forwarded as f64), ("rejected", self.rejected as f64)]);
    }
}
