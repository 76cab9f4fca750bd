//! The node kind: `[nodes.<group>]` in a scenario, dedicated or public nodes of a public computing utility.

use rand::RngExt;
use rand_distr::LogNormal;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Availability, Node, NodeConfig};
use crate::model::Service;
use crate::registry::limits::SPEEDS;
use crate::registry::values::{Delay, GroupSize, NonNegative, Positive, Seconds, Speed};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, RawGroup, Unit,
};
use crate::sim::{BoxedAgent, rng};

/// The kind's name in the directory.
pub const KIND: &str = "node";

/// The node kind.
pub struct NodeKind;

impl AgentKind for NodeKind {
    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "nodes"
    }

    fn about(&self) -> &'static str {
        "a node of a public computing utility: dedicated, or a public machine lent while its owner leaves it idle"
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("replicas_lost", Unit::Count, "replicas a public node lost when its owner took it back"),
            Metric::new(
                "work_lost",
                Unit::Seconds,
                "work those replicas had done on the node, in seconds on a dedicated node",
            ),
        ];
        METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        &["replicas_lost", "work_lost"]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawNode>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawNode>(group)?))
    }
}

/// A group of nodes of one utility.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawNode {
    /// How many nodes (at most 100,000 agents per scenario).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// The utility manager they serve (a utility group of one member, or a member).
    pub utility: String,
    /// Public nodes: the owner's habits, `{ up = <mean s>, down = <mean s> }`, the means of the exponential
    /// available (AV) and taken-back (NA) periods; their long-run availability is up / (up + down). Without it the
    /// nodes are dedicated: always there, inside the cluster.
    pub availability: Option<RawAvailability>,
    /// Speed relative to a dedicated node (default 1): its mean when `speed-cv` is given (Asaduzzaman & Maheswaran's
    /// public nodes run at 0.34 of a dedicated node on average).
    pub speed: Option<Speed>,
    /// Public nodes: the coefficient of variation of their speeds, drawn from a log-normal of mean `speed` per node
    /// and replication (default 0: all at `speed`; the paper's empirical SETI@home histogram is not published).
    pub speed_cv: Option<NonNegative>,
    /// Public nodes: the access link [bit/s; default 1e6].
    pub bandwidth: Option<Positive>,
    /// Public nodes: the latency to the cluster [s; default 0.1].
    pub latency: Option<Delay>,
}

/// Mean AV and NA periods.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAvailability {
    /// Mean available period \[s\].
    pub up: Seconds,
    /// Mean taken-back period \[s\].
    pub down: Seconds,
}

impl RawGroup for RawNode {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let utility = cx.resolve("utility", &self.utility, &[Service::ManagesNodes])?;
        if utility.len() != 1 {
            return Err(Invalid::at(
                "utility",
                format!("expected one utility manager; `{}` has {}", self.utility, utility.len()),
            )
            .hint("name one member of the group"));
        }
        if self.availability.is_none() {
            for (key, given) in [
                ("speed-cv", self.speed_cv.is_some()),
                ("bandwidth", self.bandwidth.is_some()),
                ("latency", self.latency.is_some()),
            ] {
                if given {
                    return Err(Invalid::at(key, "applies to public nodes only (with `availability`)"));
                }
            }
        }
        Ok(Box::new(NodeSpec {
            utility,
            availability: self.availability.map(|a| Availability { up: a.up.0, down: a.down.0 }),
            speed: self.speed.map_or(1.0, |s| s.0),
            speed_cv: self.speed_cv.map_or(0.0, |c| c.0),
            bandwidth: self.bandwidth.map_or(1e6, |b| b.0),
            latency: self.latency.map_or(0.1, |l| l.0),
        }))
    }
}

/// A checked node group.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    utility: Members,
    availability: Option<Availability>,
    speed: f64,
    speed_cv: f64,
    bandwidth: f64,
    latency: f64,
}

/// Node `name`'s speed for the replication of `seed`: log-normal of mean `mean` and coefficient of variation `cv`
/// (`mean` itself when `cv` is 0), within the speeds a scenario may give.
fn speed(mean: f64, cv: f64, seed: u64, name: &str) -> f64 {
    if cv == 0.0 {
        return mean;
    }
    let sigma2 = (1.0 + cv * cv).ln();
    let mu = mean.ln() - sigma2 / 2.0;
    let mut r = rng::stream(seed, &format!("node:{name}"), 0);
    LogNormal::new(mu, sigma2.sqrt()).map_or(mean, |d| r.sample(d)).clamp(SPEEDS.0, SPEEDS.1)
}

impl GroupSpec for NodeSpec {
    fn perpetual(&self) -> Option<String> {
        self.availability.map(|_| "public nodes' owners take them back and leave them idle for ever".into())
    }

    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let utility = self.utility.names().next().ok_or("a node needs its utility manager")?;
        Ok(Box::new(Node::new(NodeConfig {
            utility: cx.id(&utility)?,
            speed: speed(self.speed, self.speed_cv, cx.seed, member.name),
            bandwidth: self.bandwidth,
            latency: self.latency,
            availability: self.availability,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_speeds_have_the_configured_mean() {
        let n = 20_000;
        let speeds: Vec<f64> = (0..n).map(|i| speed(0.34, 0.8, 7, &format!("public-{i}"))).collect();
        let mean = speeds.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.34).abs() < 0.01, "{mean}");
        assert!(speeds.iter().any(|&s| s > 0.6) && speeds.iter().any(|&s| s < 0.2));
        assert_eq!(speed(0.34, 0.8, 7, "public-3"), speeds[3], "a member's speed is its own draw");
        assert_eq!(speed(0.34, 0.0, 7, "public-3"), 0.34);
    }
}
