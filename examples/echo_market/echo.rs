//! A toy agent kind, the "echo market": every member asks its peers a question each round and counts the answers.
//! It is all a new kind needs: this file, and one line that adds [`KIND`] to the registry.

use agents::model::Service;
use agents::protocol::{Msg, ProbeMsg, TimerMsg};
use agents::registry::values::{GroupSize, Interval};
use agents::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit,
};
use agents::report::Report;
use agents::sim::{Agent, AgentId, BoxedAgent, Ctx, Envelope, GridMarket, SimTime};
use serde::{Deserialize, Serialize};

/// The kind, for `Registry::with`.
pub static KIND: EchoKind = EchoKind;

/// The echo kind.
pub struct EchoKind;

/// What an echo agent offers its peers: answers to their questions.
const ECHOES: Service = Service::Named("echoes");

impl AgentKind for EchoKind {
    fn name(&self) -> &'static str {
        "echo"
    }

    fn table(&self) -> &'static str {
        "echoes"
    }

    fn about(&self) -> &'static str {
        "a toy market whose members ask their peers every round and count the answers"
    }

    fn services(&self) -> &'static [Service] {
        &[ECHOES]
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![Policy::of("answer", &[Answer::Always, Answer::Never], "the toy's own")]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawEcho>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(agents::registry::parse::<RawEcho>(group)?))
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("asked", Unit::Count, "questions sent"),
            Metric::new("answers", Unit::Count, "answers received"),
        ];
        METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        &["answers"]
    }
}

/// Whether a member answers questions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Every question gets an answer.
    #[default]
    Always,
    /// None does.
    Never,
}

/// A group of echo agents.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEcho {
    /// How many members.
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// The group (or member) whose members they ask.
    pub peers: String,
    /// Seconds between rounds.
    pub interval: Interval,
    /// "always" (default) or "never".
    #[serde(default)]
    #[schemars(with = "String")]
    pub answer: Answer,
}

impl RawGroup for RawEcho {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let peers = cx.resolve("peers", &self.peers, &[ECHOES])?;
        Ok(Box::new(EchoSpec { peers, interval: self.interval.0, answer: self.answer }))
    }
}

/// A checked echo group.
#[derive(Debug)]
pub struct EchoSpec {
    peers: Members,
    interval: f64,
    answer: Answer,
}

impl GroupSpec for EchoSpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let peers = self.peers.names().map(|p| cx.id(&p)).collect::<Result<_, _>>()?;
        Ok(Box::new(Echo { peers, interval: self.interval, answer: self.answer, asked: 0, answers: 0 }))
    }
}

/// One member of the echo market.
pub struct Echo {
    peers: Vec<AgentId>,
    interval: f64,
    answer: Answer,
    asked: u64,
    answers: u64,
}

impl Agent<GridMarket> for Echo {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.wake_in(self.interval, TimerMsg::Round { n: 0 });
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match env.msg {
            Msg::Timer(TimerMsg::Round { n }) => {
                for &p in &self.peers {
                    ctx.send(p, ProbeMsg::Request { id: n });
                    self.asked += 1;
                }
                ctx.wake_in(self.interval, TimerMsg::Round { n: n + 1 });
            }
            Msg::Probe(ProbeMsg::Request { id }) if self.answer == Answer::Always => {
                ctx.send(env.from(), ProbeMsg::Reply { id })
            }
            Msg::Probe(ProbeMsg::Reply { .. }) => self.answers += 1,
            _ => {}
        }
    }

    fn report(&self, _: SimTime, out: &mut Report) {
        out.metrics.extend([("asked", self.asked as f64), ("answers", self.answers as f64)]);
    }
}
