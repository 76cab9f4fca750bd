//! The resource directory, the Grid Information Service (GIS) of Melendez (2010) §2: resources register with it
//! when they start, brokers ask it for the resources of their pool.

pub mod kind;

use crate::matchmaking::LocalPolicy;
use crate::protocol::{MatchMsg, Msg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// A resource directory.
#[derive(Debug, Default)]
pub struct ResourceDirectory {
    /// Registered resources, in registration order, with their policy if transparent.
    resources: Vec<(AgentId, Option<LocalPolicy>)>,
    /// Lists handed out.
    queries: u64,
}

impl Agent<GridMarket> for ResourceDirectory {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx) {
        match &env.msg {
            Msg::Match(MatchMsg::Register { policy }) => self.resources.push((env.from(), *policy)),
            Msg::Match(MatchMsg::ListResources { transparent }) => {
                self.queries += 1;
                let pool = self.resources.iter().filter(|(_, p)| p.is_some() == *transparent).copied().collect();
                ctx.send(env.from(), MatchMsg::ResourceList(Box::new(pool)));
            }
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _: SimTime, out: &mut Report) {
        out.metrics.push(("registered", self.resources.len() as f64));
        out.metrics.push(("queries", self.queries as f64));
    }
}
