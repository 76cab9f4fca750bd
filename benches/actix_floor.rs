//! The floor under any actix kernel without lookahead: a chain of actix messages among 1,000 actors with exactly
//! one message in flight, each handler sending the next message to a pseudo-random actor.
//!
//! That is all the actix runtime must do per delivery when the model gives it nothing to deliver concurrently (the
//! ring's continuous delays make every `(time, round)` batch a single envelope, and the next receiver is whichever
//! agent the event list names): no clock, no event list, no handler work. A kernel that delivers each event as one
//! actix message cannot be faster than this. Like the gridmarket ids, an iteration includes starting the actors.

use std::sync::{Arc, OnceLock};

use actix::prelude::*;

/// One hop; the padding gives it the size of the runtime's `Deliver` message (time, round, envelope).
#[derive(Message)]
#[rtype(result = "()")]
struct Hop {
    left: u64,
    state: u64,
    _payload: [u64; 9],
}

struct Node {
    nodes: Arc<OnceLock<Vec<Addr<Node>>>>,
}

impl Actor for Node {
    type Context = Context<Self>;
}

impl Handler<Hop> for Node {
    type Result = ();
    fn handle(&mut self, hop: Hop, _: &mut Context<Self>) {
        if hop.left == 0 {
            return System::current().stop();
        }
        // xorshift64: the next receiver, as unpredictable for the caches as the event list's.
        let mut x = hop.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let nodes = self.nodes.get().expect("set before the first hop");
        nodes[(x % nodes.len() as u64) as usize].do_send(Hop { left: hop.left - 1, state: x, _payload: [0; 9] });
    }
}

/// Sends `hops` messages along the chain among `actors` actors; returns the hops made.
pub fn chain(actors: usize, hops: u64) -> u64 {
    let system = System::new();
    let nodes = Arc::new(OnceLock::new());
    system.block_on(async {
        let addrs: Vec<Addr<Node>> = (0..actors).map(|_| Node { nodes: nodes.clone() }.start()).collect();
        addrs[0].do_send(Hop { left: hops - 1, state: 0x9E37_79B9_7F4A_7C15, _payload: [0; 9] });
        nodes.set(addrs).expect("set once");
    });
    system.run().expect("the system stops when the chain ends");
    hops
}
