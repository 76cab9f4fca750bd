//! The splitter of the Independent strategy (Melendez 2010 §3.3): each request goes to the transparent broker with
//! probability x and to the AS-based broker otherwise, never to both (Bernoulli thinning of the Poisson stream).

pub mod kind;

use rand::RngExt;

use crate::protocol::{MatchMsg, Msg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// A splitter.
#[derive(Debug)]
pub struct Splitter {
    transparent: AgentId,
    opaque: AgentId,
    x: f64,
    to_transparent: u64,
    to_opaque: u64,
}

impl Splitter {
    /// Sends a share `x` of requests to `transparent`, the rest to `opaque`.
    pub fn new(transparent: AgentId, opaque: AgentId, x: f64) -> Splitter {
        Splitter { transparent, opaque, x, to_transparent: 0, to_opaque: 0 }
    }
}

impl Agent<GridMarket> for Splitter {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx) {
        let Msg::Match(MatchMsg::Submit(request)) = &env.msg else { return crate::sim::unhandled(ctx, env.msg.kind()) };
        let to = if ctx.rng().random::<f64>() < self.x {
            self.to_transparent += 1;
            self.transparent
        } else {
            self.to_opaque += 1;
            self.opaque
        };
        ctx.send(to, MatchMsg::Submit(request.clone()));
    }

    fn report(&self, _: SimTime, out: &mut Report) {
        out.metrics.push(("to_transparent", self.to_transparent as f64));
        out.metrics.push(("to_opaque", self.to_opaque as f64));
    }
}
