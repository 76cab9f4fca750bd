//! Kernel throughput: the ring model on gridmarket (actix and inline runtimes) and, side by side in the same run,
//! on the peers simcore (formerly dslab-core) and nexosim; `actix-floor` is the bare actix messaging that the actix
//! runtime cannot go below (see `actix_floor.rs`).
//!
//! Ring of 1,000 agents; every delivery forwards the token to the next agent with a delay uniform in [1, 2) s; 1,000
//! tokens in flight; 1,000,000 deliveries per iteration. Run:
//! `cargo bench --features bench-peers --bench kernel`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use agents::protocol::{Msg, ProbeMsg};
use agents::sim::{Agent, AgentId, Ctx, End, Envelope, GridMarket, Runtime, SimBuilder};
use rand::RngExt;

mod actix_floor;
mod peers;

const AGENTS: u32 = 1_000;
const TOKENS: u32 = 1_000;
const DELIVERIES: u64 = 1_000_000;
const SEED: u64 = 42;
const _: () = assert!(TOKENS == AGENTS, "the model starts one token per agent");

/// Forwards every token to the next agent of the ring until its hops run out.
struct RingAgent {
    next: AgentId,
    token: Option<u32>,
}

impl RingAgent {
    fn forward(&self, ctx: &mut Ctx<'_>, id: u32, hops: u32) {
        let delay = ctx.rng().random_range(1.0..2.0);
        ctx.send_in(delay, self.next, Msg::Probe(ProbeMsg::Token { id, hops }));
    }
}

impl Agent<GridMarket> for RingAgent {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(id) = self.token {
            self.forward(ctx, id, (DELIVERIES / u64::from(TOKENS)) as u32);
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        if let Msg::Probe(ProbeMsg::Token { id, hops }) = env.msg
            && hops > 1
        {
            self.forward(ctx, id, hops - 1);
        }
    }
}

fn ring_gridmarket(runtime: Runtime) -> u64 {
    let mut b = SimBuilder::new(SEED);
    for i in 0..AGENTS {
        // One token per agent at the start, as in the peers' model.
        b.add(&format!("ring-{i}"), "ring", RingAgent { next: AgentId((i + 1) % AGENTS), token: Some(i) }).unwrap();
    }
    b.runtime(runtime);
    let mut sim = b.build().unwrap();
    let out = sim.run(End::Quiescence).unwrap();
    assert_eq!(out.delivered, DELIVERIES);
    out.delivered
}

fn kernel(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel/ring");
    g.throughput(Throughput::Elements(DELIVERIES));
    g.sample_size(10);
    g.bench_function("gridmarket", |b| b.iter(|| ring_gridmarket(Runtime::Actix { threads: 1 })));
    g.bench_function("gridmarket-inline", |b| b.iter(|| ring_gridmarket(Runtime::Inline)));
    g.bench_function("actix-floor", |b| b.iter(|| actix_floor::chain(AGENTS as usize, DELIVERIES)));
    g.bench_function("simcore", |b| b.iter(|| peers::ring_simcore(AGENTS as usize, TOKENS as usize, DELIVERIES, SEED)));
    g.bench_function("nexosim", |b| {
        b.iter(|| peers::ring_nexosim(AGENTS as usize, TOKENS as usize, DELIVERIES, SEED, None))
    });
    g.bench_function("nexosim-1thread", |b| {
        b.iter(|| peers::ring_nexosim(AGENTS as usize, TOKENS as usize, DELIVERIES, SEED, Some(1)))
    });
    g.finish();
}

criterion_group!(benches, kernel);
criterion_main!(benches);
