//! The kernel ([`gridmarket_kernel`]) specialised to gridmarket: a simulation whose agents exchange the market
//! protocol's [`Msg`] and report a [`Report`].
//!
//! Agents implement `Agent<GridMarket>`; everything else here is the kernel's types with that world filled in.

pub use gridmarket_kernel::{
    Agent, AgentId, Delay, Directory, End, EndReason, MAX_ROUNDS, Outcome, Runtime, SimError, SimTime, TimerId, World,
    rng, trace,
};

use crate::protocol::Msg;
use crate::report::Report;

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

/// gridmarket's world: the market protocol and the agents' reports.
#[derive(Debug)]
pub struct GridMarket;

impl World for GridMarket {
    type Msg = Msg;
    type Report = Report;
}

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
    use super::until_next_multiple;

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
