//! The invariants checked at the end of every run: a faulty agent (a kind of its own, added to the registry for
//! the test) breaks each in turn, and the run fails with the agent, the time and the amounts.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::ledger::{Account, External, Transfer};
use agents::registry::values::GroupSize;
use agents::registry::{AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, ParseError, RawGroup, Registry};
use agents::report::{Capacity, Holds, Report, Series};
use agents::sim::{Agent, AgentId, BoxedAgent, Ctx, Envelope, GridMarket, SimTime};
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};
use serde::Deserialize;

static FAULTY: FaultyKind = FaultyKind;

struct FaultyKind;

impl AgentKind for FaultyKind {
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn table(&self) -> &'static str {
        "faulty"
    }
    fn about(&self) -> &'static str {
        "an agent that breaks one rule"
    }
    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<String>()
    }
    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(agents::registry::parse::<RawFaulty>(group)?))
    }
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Fault {
    /// Books a transfer between two other accounts.
    Steals,
    /// Pays money it never received.
    Overdraws,
    /// Books a negative amount.
    Negative,
    /// Reports more busy PEs than it has.
    Overbooks,
    /// Reports a capacity whose series of units in use it does not report.
    Hides,
    /// Reports a series that goes back in time.
    TimeTravels,
    /// Reports a rule of its own broken.
    Confesses,
    /// Records a completed job's cost the ledger does not hold.
    Misrecords,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFaulty {
    fault: Fault,
    #[serde(default = "GroupSize::one")]
    count: GroupSize,
}

impl RawGroup for RawFaulty {
    fn count(&self) -> usize {
        self.count.0 as usize
    }
    fn check(&self, _: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        Ok(Box::new(Spec(self.fault)))
    }
}

#[derive(Debug)]
struct Spec(Fault);

impl GroupSpec for Spec {
    fn build(&self, _: &Member<'_>, _: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(Faulty { fault: self.0, me: None }))
    }
}

struct Faulty {
    fault: Fault,
    me: Option<AgentId>,
}

impl Agent<GridMarket> for Faulty {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.me = Some(ctx.me());
        ctx.wake_in(5.0, agents::protocol::TimerMsg::Wakeup);
    }

    fn handle(&mut self, _: &Envelope, _: &mut Ctx<'_>) {}

    fn report(&self, _: SimTime, out: &mut Report) {
        let me = self.me.expect("started");
        let at = SimTime::new(5.0).unwrap();
        let other = AgentId(me.0 ^ 1);
        let transfer = |payer, payee, amount| Transfer { payer, payee, amount, ..Transfer::usage(at, me, me, 0.0, 7) };
        match self.fault {
            Fault::Steals => {
                out.transfers.push(transfer(Account::Agent(other), Account::External(External::Operator), 3.0))
            }
            Fault::Overdraws => out.transfers.push(transfer(Account::Agent(me), Account::Agent(other), 2.5)),
            Fault::Negative => out.transfers.push(transfer(Account::Agent(other), Account::Agent(me), -1.0)),
            Fault::Overbooks => {
                let mut busy = Series::default();
                busy.set(at, 5.0);
                out.metrics.push(("pes", 4.0));
                out.series.push(("busy_pes", busy));
                out.capacity = Some(Capacity { units: 4.0, in_use: "busy_pes", holds: Holds::Pes { wasted: 0.0 } });
            }
            Fault::Hides => out.capacity = Some(Capacity { units: 1.0, in_use: "busy", holds: Holds::Other }),
            Fault::TimeTravels => {
                let mut queued = Series::default();
                queued.set(at, 1.0);
                queued.set(SimTime::new(2.0).unwrap(), 2.0);
                out.series.push(("queued", queued));
            }
            Fault::Confesses => out.violations.push((5.0, "promised slot 3 to two jobs".into())),
            Fault::Misrecords => out.jobs.push(agents::report::JobRecord {
                id: 7 + u64::from(me.0),
                submit: 0.0,
                start: Some(1.0),
                end: Some(5.0),
                site: None,
                pes: 1,
                runtime: 4.0,
                deadline: None,
                budget: None,
                lease: None,
                priority: 0,
                outcome: agents::report::JobOutcome::Completed,
                cost: 12.0,
                reason: None,
                parts: Vec::new(),
            }),
        }
    }
}

/// Runs two faulty agents of one kind for 10 s; the error of the run, if any.
fn run(fault: &str) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("gridmarket-invariants-{}-{fault}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("faulty.toml");
    std::fs::write(&file, format!("horizon = 10\nruntime = \"inline\"\n[faulty.f]\ncount = 2\nfault = \"{fault}\"\n"))
        .unwrap();
    let registry = Registry::standard().with(&FAULTY);
    let study = Study::load(Path::new(&file), &LoadOptions { registry, ..LoadOptions::default() }).unwrap();
    let opts = RunOptions::quiet(dir.join("out"), 1);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    result.unfinished.first().map(|u| u.2.clone())
}

#[test]
fn each_broken_invariant_fails_the_run_naming_agent_time_and_amounts() {
    let cases = [
        ("steals", "money: f-0 at t=5: usage of 3 G$ from f-1 to operator: booked by an agent that is neither party"),
        ("overdraws", "money: f-0 at t=5: usage of 2.5 G$ from f-0 to f-1: leaves f-0 with -2.5 G$"),
        ("negative", "money: f-0 at t=5: usage of -1 G$ from f-1 to f-0: an amount must be finite and non-negative"),
        ("overbooks", "f-0 at t=5: 5 of its 4 units in use (`busy_pes`)"),
        ("hides", "f-0: its capacity's series `busy` is not among its series"),
        ("time-travels", "f-0: series `queued` goes back in time, from t=5 to t=2"),
        ("confesses", "f-0 at t=5: promised slot 3 to two jobs"),
        ("misrecords", "f-0: job 7 recorded a cost of 12 but the ledger bills 0"),
    ];
    for (fault, expected) in cases {
        let e = run(fault).unwrap_or_else(|| panic!("{fault}: the run passed"));
        assert_eq!(e, format!("invariant broken: {expected}"), "{fault}");
    }
}

/// The kinds whose capacity the invariant checked, and those it did not, are in every run's `run.json`.
#[test]
fn run_json_names_the_kinds_the_over_subscription_invariant_covers() {
    let study = Study::load(Path::new("tests/scenarios/tiny/tiny.toml"), &LoadOptions::default()).unwrap();
    let out = std::env::temp_dir().join(format!("gridmarket-invariants-coverage-{}", std::process::id()));
    let result = run_study(&study, &RunOptions::quiet(out.clone(), 1), &Arc::new(AtomicBool::new(false))).unwrap();
    assert!(result.unfinished.is_empty());
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p0/r0/run.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(run["over_subscription"]["checked"], serde_json::json!(["provider"]));
    assert_eq!(run["over_subscription"]["not_checked"], serde_json::json!(["broker"]));
}
