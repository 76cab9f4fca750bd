//! The kernel ([`gridmarket_kernel`]) specialised to gridmarket: a simulation whose agents exchange the market
//! protocol's [`Msg`] and report a [`Report`](crate::report::Report).
//!
//! Agents implement `Agent<GridMarket>`; everything else here is the kernel's types with that world filled in.

pub use gridmarket_kernel::{
    Agent, AgentId, Delay, Directory, End, EndReason, MAX_ROUNDS, Outcome, Runtime, SimError, SimTime, TimerId, World,
    rng, trace,
};

use crate::protocol::Msg;

/// The delay \[s\] from `now` to the first multiple of `period` after it: rounds and cycles end at multiples of their
/// period. A multiple that binary floating point leaves within half a unit of `now` (`81 × 0.1` at `now` = 8.1) would
/// be `now` again once added to it, and the timer would fire at the same instant for ever: the next one is taken.
pub fn until_next_multiple(now: f64, period: f64) -> f64 {
    let mut k = (now / period).floor() + 1.0;
    while now + (k * period - now) <= now {
        k += 1.0;
    }
    k * period - now
}

/// Logs a message (of kind `kind`, as [`Msg::kind`] names it) its receiver has no use for, the same way for every
/// agent: a protocol error, never dropped silently.
pub fn unhandled(ctx: &Ctx<'_>, kind: &str) {
    tracing::error!(agent = ctx.name(), kind, "unhandled message");
}

/// gridmarket's world: the market protocol and the agents' reports (its [`World`] impl, which names the services of
/// the standard kinds, is in the crate's top module, `standard`).
#[derive(Debug)]
pub struct GridMarket;

/// A message on its way between two agents.
pub type Envelope = gridmarket_kernel::Envelope<Msg>;
/// What a handler can do: read the clock, send, set timers, draw random numbers, stop the run.
pub type Ctx<'a> = gridmarket_kernel::Ctx<'a, Msg>;
/// Assembles a simulation of gridmarket agents.
pub type SimBuilder = gridmarket_kernel::SimBuilder<GridMarket>;
/// A built simulation of gridmarket agents.
pub type Simulation = gridmarket_kernel::Simulation<GridMarket>;
/// Any gridmarket agent, boxed.
pub type BoxedAgent = gridmarket_kernel::BoxedAgent<GridMarket>;
/// One line of a message trace, as read back ([`trace::read`]).
pub type TraceRecord = trace::TraceRecord<Msg>;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Debug;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata};

    use super::until_next_multiple;
    use crate::directory::ResourceDirectory;
    use crate::protocol::{JobMsg, MatchMsg, Msg};
    use crate::testbed::TestBed;

    /// The (agent, kind) of every error event that says "unhandled message".
    #[derive(Clone, Default)]
    struct Unhandled(Arc<Mutex<Vec<(String, String)>>>);

    #[derive(Default)]
    struct Fields(BTreeMap<String, String>);

    impl Visit for Fields {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().into(), value.into());
        }
        fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
            self.0.insert(field.name().into(), format!("{value:?}"));
        }
    }

    impl tracing::Subscriber for Unhandled {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            if *event.metadata().level() == Level::ERROR && fields.0["message"] == "unhandled message" {
                self.0.lock().unwrap().push((fields.0["agent"].clone(), fields.0["kind"].clone()));
            }
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn an_agent_logs_a_message_it_has_no_use_for() {
        let logged = Unhandled::default();
        tracing::subscriber::with_default(logged.clone(), || {
            let mut tb = TestBed::new(1);
            tb.agent("gis", crate::directory::kind::KIND, ResourceDirectory::default());
            tb.probe("broker");
            tb.inject(1.0, "broker", "gis", Msg::Match(MatchMsg::ListResources { transparent: true }));
            tb.inject(2.0, "broker", "gis", Msg::Job(JobMsg::Cancel { job: 7 }));
            tb.run_to_quiescence().unwrap();
        });
        // The list request is answered; the cancellation, meant for a provider, is logged once.
        assert_eq!(*logged.0.lock().unwrap(), [("gis".to_string(), "job.cancel".to_string())]);
    }

    #[test]
    fn the_next_multiple_is_always_a_later_instant() {
        assert_eq!(until_next_multiple(0.0, 50.0), 50.0);
        assert_eq!(until_next_multiple(50.0, 50.0), 50.0);
        assert_eq!(until_next_multiple(60.0, 50.0), 40.0);
        // 81 × 0.1 is a hair above 8.1, less than half a unit: the multiple after it.
        let now = 8.1;
        let delay = until_next_multiple(now, 0.1);
        assert!(now + delay > now && (now + delay - 8.2).abs() < 1e-12, "{delay}");
        for i in 0..10_000 {
            let now = f64::from(i) * 0.1;
            assert!(now + until_next_multiple(now, 0.1) > now, "at {now}");
        }
    }
}
