//! Study-specific synthetic workload models.
//!
//! - [`Das2Model`]: the DAS-2 model (Li, Groep & Wolters 2004) with the parameters of
//!   Amini Salehi (2012) ch4, Table 4.2.
//! - [`BotModel`]: the Grid Workloads Archive bag-of-tasks model (Iosup et al. 2008) of
//!   Amini Salehi (2012) ch5 (Table 5.2) and Amini Salehi, Javadi & Buyya (Table II).
//! - [`LocalRequestModel`]: the local requests Amini Salehi (2012) ch6 interleaves with a trace.
//! - [`MetaBrokerJobModel`]: the 50-user jobs of Garg (2010) ch3–4.
//! - [`AdvanceReservationModel`]: the advance reservations of Melendez (2010) §4.1.

use rand::distr::Distribution;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::dist::{Dist, TwoStageLogUniform};
use super::qos::{DeadlineSlack, UrgencyMix, relaxed_budget};
use super::{Limit, Workload, WorkloadError, WorkloadJob};

/// The three clusters of the InterGrid experiments (Amini Salehi 2012, ch4–5, Amini Salehi, Javadi & Buyya §A.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum InterGridCluster {
    /// 64 PEs at 2000 MIPS.
    C64,
    /// 128 PEs at 3000 MIPS.
    C128,
    /// 256 PEs at 2100 MIPS.
    C256,
}

impl InterGridCluster {
    /// Number of PEs.
    pub fn pes(self) -> u32 {
        match self {
            InterGridCluster::C64 => 64,
            InterGridCluster::C128 => 128,
            InterGridCluster::C256 => 256,
        }
    }

    /// PE speed relative to 2000 MIPS (2000, 3000 and 2100 MIPS).
    pub fn speed(self) -> f64 {
        match self {
            InterGridCluster::C64 => 1.0,
            InterGridCluster::C128 => 1.5,
            InterGridCluster::C256 => 1.05,
        }
    }
}

/// Time unit of Table 4.2's Weibull inter-arrival scales (Amini Salehi 2012), which the table leaves unstated.
///
/// Seconds is the unit of the DAS-2 model (Li, Groep & Wolters 2004, "Workload Characteristics of a Multi-cluster
/// Supercomputer"), whose GridSim generator draws gaps in seconds as scale · (−ln U)^(1/shape), and the only one that
/// fits the chapter's magnitudes: differences of 2,738–3,897 preempted VMs (Fig 4.3(a)) need many thousands of
/// external VMs in two days, and minutes bring about 2,100. It makes each cluster's local requests alone offer 3–7
/// times its capacity, against the chapter's wish that the local rate leave "room for external requests". Minutes
/// make that load 5–11% and the external one 1% of the grid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InterarrivalUnit {
    /// Gaps in seconds (the DAS-2 model's unit).
    #[default]
    Seconds,
    /// Gaps in minutes: every gap 60 times longer.
    Minutes,
}

impl InterarrivalUnit {
    /// Seconds per unit.
    pub fn seconds(self) -> f64 {
        match self {
            InterarrivalUnit::Seconds => 1.0,
            InterarrivalUnit::Minutes => 60.0,
        }
    }
}

/// Renewal arrivals until `limit`: the first job arrives one gap after time 0.
fn arrivals<R: Rng + ?Sized>(
    interarrival: &Dist,
    limit: Limit,
    rng: &mut R,
    mut job: impl FnMut(usize, f64, &mut R),
) -> Result<(), WorkloadError> {
    limit.validate()?;
    let gaps = interarrival.sampler()?;
    let mean = interarrival.mean();
    if matches!(limit, Limit::Until(_)) && (mean.is_nan() || mean <= 0.0) {
        // Time would never reach the horizon.
        return Err(WorkloadError::param("inter-arrival", "a time horizon needs a positive mean gap"));
    }
    let mut t = 0.0;
    for count in 0.. {
        let gap = gaps.sample(rng);
        if gap.is_nan() || gap < 0.0 {
            return Err(WorkloadError::param("inter-arrival", format!("drew a negative gap {gap}")));
        }
        t += gap;
        if limit.reached(count, t) {
            break;
        }
        job(count, t, rng);
    }
    Ok(())
}

/// DAS-2 model: Weibull inter-arrivals, two-stage log-uniform sizes with P_one and
/// P_pow2, log-normal durations (Amini Salehi 2012, §5.6, Table 4.2).
///
/// Our reading: sizes follow the Lublin generator the DAS-2 model derives from (exponent
/// rounded for power-of-two jobs); Eq 4.28 with its ⌈r⌉ is only the thesis's estimate of
/// the mean, available as [`TwoStageLogUniform::eq_4_28_mean`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Das2Model {
    /// Number of VMs: (P_one, P_pow2, l, m, h, q).
    pub size: TwoStageLogUniform,
    /// Request duration, s: log-normal (a, b).
    pub duration: Dist,
    /// Inter-arrival time, s: Weibull (scale α, shape β).
    pub interarrival: Dist,
}

impl Das2Model {
    /// Log-space sd b of every duration row of Table 4.2.
    pub const DURATION_SIGMA: f64 = 1.7;

    /// External requests (the "Grid" rows): l = 0.8, m ∈ [2.5, 3.5], h = 6, q = 0.9,
    /// P_one = 0.2, P_pow2 = 0.5; duration log-normal (a ∈ [3.0, 5.4], b = 1.7); Weibull
    /// inter-arrivals. Our reading (Amini Salehi 2012, §5.6 note): α is the scale and β the shape; the
    /// external sweep uses (3.8 ≤ α ≤ 7.0, β = 0.5), the other sweeps (7.0, 1.1).
    pub fn external(m: f64, a: f64, scale: f64, shape: f64) -> Self {
        Das2Model {
            size: TwoStageLogUniform { serial_prob: 0.2, pow2_prob: 0.5, u_low: 0.8, u_med: m, u_hi: 6.0, u_prob: 0.9 },
            duration: Dist::LogNormal { mu: a, sigma: Self::DURATION_SIGMA },
            interarrival: Dist::Weibull { scale, shape },
        }
    }

    /// External defaults of the sweeps: mean 5 VMs (m fitted on the exact mean), mean
    /// duration 420 s (a = ln 420 − b²/2 = 4.595) and Weibull(7.0, 1.1), rate ≈ 0.15.
    pub fn external_default() -> Result<Self, WorkloadError> {
        let mut model = Das2Model::external(2.5, 0.0, 7.0, 1.1);
        model.size = model.size.with_mean(5.0)?;
        model.duration = Dist::lognormal_with_mean(420.0, Self::DURATION_SIGMA);
        Ok(model)
    }

    /// Local requests of a cluster (the C64/C128/C256 rows): P_one = 0.3, P_pow2 = 0.6,
    /// l = 0.8, q = 0.9, (m, h) = (2.5, 6), (3.5, 7), (4.5, 8); a = 5.0, 5.35, 5.5; Weibull
    /// shape 0.35 with the given scale (swept over 0.1–7.0, 0.08–6.0, 0.06–4.5).
    pub fn local(cluster: InterGridCluster, scale: f64) -> Self {
        let (m, h, a) = match cluster {
            InterGridCluster::C64 => (2.5, 6.0, 5.0),
            InterGridCluster::C128 => (3.5, 7.0, 5.35),
            InterGridCluster::C256 => (4.5, 8.0, 5.5),
        };
        Das2Model {
            size: TwoStageLogUniform { serial_prob: 0.3, pow2_prob: 0.6, u_low: 0.8, u_med: m, u_hi: h, u_prob: 0.9 },
            duration: Dist::LogNormal { mu: a, sigma: Self::DURATION_SIGMA },
            interarrival: Dist::Weibull { scale, shape: 0.35 },
        }
    }

    /// Local defaults: Weibull scales 2.0, 1.6 and 1.2 (mean gaps 10.1, 8.0 and 6.0 s).
    pub fn local_default(cluster: InterGridCluster) -> Self {
        let scale = match cluster {
            InterGridCluster::C64 => 2.0,
            InterGridCluster::C128 => 1.6,
            InterGridCluster::C256 => 1.2,
        };
        Das2Model::local(cluster, scale)
    }

    /// Table 4.2's Weibull scale read in `unit`: gaps `unit.seconds()` times those in seconds.
    pub fn in_unit(mut self, unit: InterarrivalUnit) -> Self {
        if let Dist::Weibull { scale, shape } = self.interarrival {
            self.interarrival = Dist::Weibull { scale: scale * unit.seconds(), shape };
        }
        self
    }

    /// Offered load on `pes` PEs of relative speed `speed`: arrival rate × mean VMs × mean duration / (pes × speed),
    /// with `mean_vms` the generator's mean or Eq 4.28's estimate.
    pub fn offered_load(&self, mean_vms: f64, pes: f64, speed: f64) -> f64 {
        mean_vms * self.duration.mean() / (self.interarrival.mean() * pes * speed)
    }

    /// Generates requests numbered from 1.
    pub fn generate<R: Rng + ?Sized>(&self, limit: Limit, rng: &mut R) -> Result<Workload, WorkloadError> {
        self.size.validate()?;
        let durations = self.duration.sampler()?;
        let mut jobs = Vec::new();
        arrivals(&self.interarrival, limit, rng, |i, t, rng| {
            let pes = self.size.sample(rng);
            let runtime = durations.sample(rng);
            jobs.push(WorkloadJob::new(i as u64 + 1, t, runtime, pes));
        })?;
        Ok(Workload::new(jobs))
    }
}

/// GWA bag-of-tasks model: Weibull gaps between bags, a Weibull number of tasks, normal
/// task durations (Amini Salehi 2012, §6.4 Table 5.2; Amini Salehi, Javadi & Buyya §A.6 Table II).
///
/// Each task becomes a one-PE job with the bag's id in [`WorkloadJob::bot`] and the bag's
/// submit time. Our reading: the task count is the Weibull draw rounded to the nearest integer,
/// at least 1; durations are normal truncated to positive values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BotModel {
    /// Gap between bag arrivals, s: Weibull (scale α, shape 7.86).
    pub interarrival: Dist,
    /// Tasks per bag: Weibull (1.76, 2.11).
    pub tasks: Dist,
    /// Task duration, s: normal (M, 6.1).
    pub task_duration: Dist,
    /// Urgency classes of external bags; `None` for local ones.
    pub urgency: Option<UrgencyMix>,
    /// Each bag is one request (PEs = its tasks, runtime = their mean duration) with its deadline set from its
    /// urgency, rather than one single-PE job per task (Amini Salehi, Javadi & Buyya: moldable requests).
    pub whole_bags: bool,
}

impl BotModel {
    /// Weibull shape of the gaps between bags (β_e = β_l = 7.86).
    pub const INTERARRIVAL_SHAPE: f64 = 7.86;
    /// Standard deviation of the task duration (σ_e = σ_l = 6.1 s).
    pub const TASK_DURATION_SD: f64 = 6.1;

    /// Tasks per bag. Which of (1.76, 2.11) is the scale is not stated; by analogy
    /// with the inter-arrival row (scale first) the scale is 1.76 (mean 1.56 tasks). Swap
    /// the fields for the other reading (mean 1.88).
    pub fn tasks_per_bag() -> Dist {
        Dist::Weibull { scale: 1.76, shape: 2.11 }
    }

    /// External bags: scale α_e (0.2–3.2, default 1.7), mean task duration M_e (60–110 s,
    /// default 90), urgency classes of [`UrgencyMix::amini_salehi_ch5`].
    pub fn external(alpha_e: f64, m_e: f64) -> Self {
        BotModel { urgency: Some(UrgencyMix::amini_salehi_ch5()), ..BotModel::bags(alpha_e, m_e) }
    }

    /// Local bags of a cluster. Table values (α_l 2–10, default 4; M_l 60–110, default 90)
    /// are for C128; C64 has α_l + 1 and M_l − 1, C256 has α_l − 1 and M_l + 1 (literally ±1,
    /// Amini Salehi, Javadi & Buyya §A.6).
    pub fn local(alpha_l: f64, m_l: f64, cluster: InterGridCluster) -> Self {
        let shift = match cluster {
            InterGridCluster::C64 => -1.0,
            InterGridCluster::C128 => 0.0,
            InterGridCluster::C256 => 1.0,
        };
        BotModel::bags(alpha_l - shift, m_l + shift)
    }

    fn bags(alpha: f64, m: f64) -> Self {
        BotModel {
            interarrival: Dist::Weibull { scale: alpha, shape: Self::INTERARRIVAL_SHAPE },
            tasks: BotModel::tasks_per_bag(),
            task_duration: Dist::TruncatedNormal { mean: m, sd: Self::TASK_DURATION_SD, low: Some(0.0), high: None },
            urgency: None,
            whole_bags: false,
        }
    }

    /// ω = mean number of tasks × mean task duration, the mean work of a bag used by
    /// PACP (Amini Salehi 2012, §6.4), from the continuous Weibull mean as the thesis does.
    pub fn mean_work(&self) -> f64 {
        self.tasks.mean() * self.task_duration.mean()
    }

    /// Generates bags until `limit` (which counts bags); jobs and bags are numbered from 1.
    /// All tasks of a bag share its urgency; deadlines are left to the dispatcher, as they
    /// depend on the cluster (see [`super::Urgency::deadline`]).
    pub fn generate<R: Rng + ?Sized>(&self, limit: Limit, rng: &mut R) -> Result<Workload, WorkloadError> {
        let tasks = self.tasks.sampler()?;
        let durations = self.task_duration.sampler()?;
        let urgency = self.urgency.as_ref().map(UrgencyMix::sampler).transpose()?;
        let mut jobs = Vec::new();
        arrivals(&self.interarrival, limit, rng, |bag, t, rng| {
            let n = tasks.sample(rng).round().max(1.0) as u64;
            let u = urgency.as_ref().map(|s| s.sample(rng));
            if self.whole_bags {
                let runtime = (0..n).map(|_| durations.sample(rng)).sum::<f64>() / n as f64;
                let mut job = WorkloadJob::new(jobs.len() as u64 + 1, t, runtime, n as u32);
                job.bot = Some(bag as u64 + 1);
                job.urgency = u;
                job.deadline = u.map(|u| u.deadline(t, runtime));
                return jobs.push(job);
            }
            for _ in 0..n {
                let mut job = WorkloadJob::new(jobs.len() as u64 + 1, t, durations.sample(rng), 1);
                job.bot = Some(bag as u64 + 1);
                job.urgency = u;
                jobs.push(job);
            }
        })?;
        Ok(Workload::new(jobs))
    }
}

/// Size ranges θ of local requests in Amini Salehi (2012) ch6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LocalSize {
    /// 1–24 nodes.
    Small,
    /// 25–48 nodes.
    Medium,
    /// 49–72 nodes.
    Large,
}

impl LocalSize {
    /// Inclusive node range.
    pub fn range(self) -> (u32, u32) {
        match self {
            LocalSize::Small => (1, 24),
            LocalSize::Medium => (25, 48),
            LocalSize::Large => (49, 72),
        }
    }
}

/// Local requests interleaved with a trace (Amini Salehi 2012, §7.6, ch6).
///
/// ρ is the local share of the RP's node-hours (it adds to the trace's 34.8% utilisation),
/// δ the mean duration (each drawn in δ ± 30 min), θ the size range (uniform). The number
/// of requests follows: n = ρ·nodes·horizon / (δ·θ̄); the mean gap is g = horizon / n and
/// each gap is drawn in g ± 1 h. Our reading: when g < 1 h the half-width shrinks to g so that
/// gaps stay non-negative and the mean stays g.
///
/// With a `notice`, each request is made that long before it must start (an advance reservation: the request's
/// `earliest_start` is its start, its `submit` the start minus the notice, never before 0), the form of the injection
/// files distributed with the Haizea lease manager for the thesis's setting (a day ahead).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalRequestModel {
    /// ρ, fraction of the RP's node-time taken by local requests (0.05–0.30).
    pub rho: f64,
    /// δ, mean duration, s (1–4 h).
    pub mean_duration: f64,
    /// θ, inclusive node range.
    pub nodes: (u32, u32),
    /// Nodes of the RP (144, 256 or 512).
    pub rp_nodes: u32,
    /// Length of the workload, s (30 days in the thesis).
    pub horizon: f64,
    /// How long before its start each request is made, s (0: when it starts).
    pub notice: f64,
}

impl LocalRequestModel {
    /// Guard against parameters that would exhaust memory (the thesis has about 500).
    const MAX_REQUESTS: usize = 100_000_000;

    /// Amini Salehi (2012) ch6 set-up over 30 days; defaults of the sweeps are ρ = 0.15, δ = 3 h,
    /// θ = medium, 512 nodes.
    pub fn amini_salehi_ch6(rho: f64, delta_hours: f64, theta: LocalSize, rp_nodes: u32) -> Self {
        LocalRequestModel {
            rho,
            mean_duration: delta_hours * 3600.0,
            nodes: theta.range(),
            rp_nodes,
            horizon: 30.0 * 86_400.0,
            notice: 0.0,
        }
    }

    /// Number of local requests n = round(ρ·nodes·horizon / (δ·θ̄)).
    pub fn count(&self) -> usize {
        let mean_nodes = f64::from(self.nodes.0 + self.nodes.1) / 2.0;
        let n = self.rho * f64::from(self.rp_nodes) * self.horizon / (self.mean_duration * mean_nodes);
        n.round() as usize
    }

    /// Generates the requests, numbered from 1.
    pub fn generate<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Workload, WorkloadError> {
        let valid = (0.0..=1.0).contains(&self.rho)
            && self.mean_duration >= 1800.0
            && self.mean_duration.is_finite()
            && 1 <= self.nodes.0
            && self.nodes.0 <= self.nodes.1
            && self.horizon > 0.0
            && self.horizon.is_finite()
            && self.notice >= 0.0
            && self.notice.is_finite();
        if !valid {
            return Err(WorkloadError::param(
                "LocalRequestModel",
                format!("need rho in [0, 1], delta >= 30 min, 1 <= nodes, finite horizon and notice: {self:?}"),
            ));
        }
        let n = self.count();
        if n > Self::MAX_REQUESTS {
            return Err(WorkloadError::param("LocalRequestModel", format!("{n} requests is beyond any study")));
        }
        let mut jobs = Vec::with_capacity(n);
        if n == 0 {
            return Ok(Workload::new(jobs));
        }
        let gap = self.horizon / n as f64;
        let half = gap.min(3600.0);
        let mut t = 0.0;
        for i in 0..n {
            t += gap - half + 2.0 * half * rng.random::<f64>();
            let runtime = self.mean_duration - 1800.0 + 3600.0 * rng.random::<f64>();
            let pes = rng.random_range(self.nodes.0..=self.nodes.1);
            let mut job = WorkloadJob::new(i as u64 + 1, (t - self.notice).max(0.0), runtime, pes);
            if self.notice > 0.0 {
                job.earliest_start = Some(t);
            }
            jobs.push(job);
        }
        Ok(Workload::new(jobs))
    }
}

/// The jobs of Garg (2010) ch3–4 (§3.3, §4.4): concurrent users with one job each, all
/// submitted within the first 20 s, with budgets and deadlines.
///
/// Our reading: "varied by x% using a Gaussian" is a normal with sd = x% of the mean. "10-50% variations in
/// the number of tasks (using Gaussian distribution)" gives a range of variations: each job draws its own, uniformly
/// from `task_variation` (no draw when both ends are equal). Tasks are rounded to at least 1; runtimes are kept
/// positive. Runtime estimates are exact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaBrokerJobModel {
    /// Number of users (jobs); 50.
    pub jobs: usize,
    /// Mean number of one-CPU tasks per job; 5.
    pub mean_tasks: f64,
    /// Relative variation of the task count (its sd over its mean), drawn per job uniformly from [low, high];
    /// the thesis gives 0.1–0.5.
    pub task_variation: [f64; 2],
    /// Mean estimated runtime, s; 400.
    pub mean_runtime: f64,
    /// Relative variation of the runtime; 0.2.
    pub runtime_variation: f64,
    /// Submit times are uniform in [0, submit_window], s; 20.
    pub submit_window: f64,
    /// Deadline scenario.
    pub slack: DeadlineSlack,
    /// Mean price per CPU-second, G$; 4.5 (budgets are twice the cost at this price).
    pub mean_price: f64,
}

impl MetaBrokerJobModel {
    /// The thesis set-up with the given deadline scenario and range of task-count variations.
    pub fn new(slack: DeadlineSlack, task_variation: [f64; 2]) -> Self {
        MetaBrokerJobModel {
            jobs: 50,
            mean_tasks: 5.0,
            task_variation,
            mean_runtime: 400.0,
            runtime_variation: 0.2,
            submit_window: 20.0,
            slack,
            mean_price: 4.5,
        }
    }

    /// Generates the jobs in submit order, numbered from 1; job i belongs to user i − 1.
    pub fn generate<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Workload, WorkloadError> {
        let [low, high] = self.task_variation;
        let tasks_with = |variation: f64| {
            Dist::TruncatedNormal { mean: self.mean_tasks, sd: self.mean_tasks * variation, low: Some(0.5), high: None }
                .sampler()
        };
        // One sampler when the variation is fixed (and no draw of it), else one per job.
        let fixed = if low == high { Some(tasks_with(low)?) } else { None };
        let variations = Dist::Uniform { low, high: high.max(low) }.sampler()?;
        let runtimes = Dist::TruncatedNormal {
            mean: self.mean_runtime,
            sd: self.mean_runtime * self.runtime_variation,
            low: Some(0.0),
            high: None,
        }
        .sampler()?;
        let submits = Dist::Uniform { low: 0.0, high: self.submit_window }.sampler()?;
        let slack = self.slack.dist().sampler()?;
        let mut jobs: Vec<WorkloadJob> = (0..self.jobs)
            .map(|i| {
                let submit = submits.sample(rng);
                let runtime = runtimes.sample(rng);
                let drawn = match &fixed {
                    Some(tasks) => tasks.sample(rng),
                    None => tasks_with(variations.sample(rng))?.sample(rng),
                };
                let pes = drawn.round().max(1.0) as u32;
                Ok(WorkloadJob {
                    user: u32::try_from(i).ok(),
                    requested_time: Some(runtime),
                    deadline: Some(submit + runtime + slack.sample(rng)),
                    budget: Some(relaxed_budget(runtime, pes, self.mean_price)),
                    ..WorkloadJob::new(0, submit, runtime, pes)
                })
            })
            .collect::<Result<_, WorkloadError>>()?;
        jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit));
        for (i, j) in jobs.iter_mut().enumerate() {
            j.id = i as u64 + 1;
        }
        Ok(Workload::new(jobs))
    }
}

/// Advance-reservation requests of Melendez (2010) §4.1: Poisson arrivals, earliest start
/// a + U(0, 12 h), deadline D = S + E + L with a laxity L that is a fixed percentage of
/// the mean service time, optionally mixed with on-demand requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdvanceReservationModel {
    /// λ, arrivals per second.
    pub arrival_rate: f64,
    /// Service time E, s: U(10, 90) min by default.
    pub service: Dist,
    /// Upper bound of the earliest-start offset, s (12 h; swept over 1, 5, 12, 20 h).
    pub start_window: f64,
    /// Laxity as a fraction of the mean service time (2.0 = 200%).
    pub laxity: f64,
    /// Share of on-demand requests (0, or 0.2 for the mixed workload).
    pub on_demand_fraction: f64,
}

impl AdvanceReservationModel {
    /// Table 1 defaults: U(10, 90) min service, start window 12 h, laxity 200%, AR only.
    pub fn melendez(arrival_rate: f64) -> Self {
        AdvanceReservationModel {
            arrival_rate,
            service: AdvanceReservationModel::service_vf(50.0 * 60.0, 0.8),
            start_window: 12.0 * 3600.0,
            laxity: 2.0,
            on_demand_fraction: 0.0,
        }
    }

    /// Service time in the "variability factor" form U((1 − vf)·m, (1 + vf)·m).
    pub fn service_vf(mean: f64, vf: f64) -> Dist {
        Dist::Uniform { low: (1.0 - vf) * mean, high: (1.0 + vf) * mean }
    }

    /// Generates requests numbered from 1. AR requests get an earliest start; on-demand
    /// ones start at arrival, with deadline a + E + 12 h + 100 × mean(E) (our reading of
    /// "(mean service time)(100)" as "×100").
    pub fn generate<R: Rng + ?Sized>(&self, limit: Limit, rng: &mut R) -> Result<Workload, WorkloadError> {
        let valid = (0.0..=1.0).contains(&self.on_demand_fraction)
            && self.start_window >= 0.0
            && self.start_window.is_finite()
            && self.laxity >= 0.0
            && self.laxity.is_finite();
        if !valid {
            return Err(WorkloadError::param(
                "AdvanceReservationModel",
                format!("need OD share in [0, 1], finite non-negative window and laxity: {self:?}"),
            ));
        }
        let service = self.service.sampler()?;
        let mean_service = self.service.mean();
        let laxity = self.laxity * mean_service;
        let mut jobs = Vec::new();
        arrivals(&Dist::poisson_arrivals(self.arrival_rate), limit, rng, |i, a, rng| {
            let e = service.sample(rng);
            let mut job = WorkloadJob::new(i as u64 + 1, a, e, 1);
            if rng.random::<f64>() < self.on_demand_fraction {
                job.deadline = Some(a + e + 12.0 * 3600.0 + 100.0 * mean_service);
            } else {
                let s = a + self.start_window * rng.random::<f64>();
                job.earliest_start = Some(s);
                job.deadline = Some(s + e + laxity);
            }
            jobs.push(job);
        })?;
        Ok(Workload::new(jobs))
    }
}

#[cfg(test)]
mod tests {
    use super::super::UrgencyClass;
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn mean(v: impl Iterator<Item = f64>) -> f64 {
        let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
        s / n as f64
    }

    #[test]
    fn das2_published_means() {
        // Amini Salehi (2012) §5.6 derived values (Eq 4.28–4.30).
        let m25 = Das2Model::external(2.5, 4.595, 7.0, 1.1);
        assert!((m25.size.eq_4_28_mean() - 3.33).abs() < 0.01);
        let m30 = Das2Model::external(3.0, 4.595, 7.0, 1.1);
        assert!((m30.size.eq_4_28_mean() - 5.54).abs() < 0.01);
        assert!((m25.duration.mean() - 420.0).abs() < 1.0);
        let locals = [
            (InterGridCluster::C64, 3.08, 629.0, 10.06),
            (InterGridCluster::C128, 5.65, 893.0, 8.05),
            (InterGridCluster::C256, 10.71, 1038.0, 6.03),
        ];
        for (c, vms, dur, gap) in locals {
            let m = Das2Model::local_default(c);
            assert!((m.size.eq_4_28_mean() - vms).abs() < 0.01, "{c:?}");
            assert!((m.duration.mean() / dur - 1.0).abs() < 0.01, "{c:?}");
            assert!((m.interarrival.mean() - gap).abs() < 0.01, "{c:?}");
            assert!(m.size.max_size() <= c.pes());
        }
    }

    #[test]
    fn das2_offered_load_of_each_reading() {
        // Offered load ρ_j = rate × v̄ × d̄ / (M_j × speed_j) of each cluster's local requests, v̄ by Eq 4.28 (the
        // generator's means, 4.1, 6.9 and 12.3 VMs, give 4.0, 4.0 and 7.9 in seconds), for the readings of Table 4.2's
        // Weibull rows: (scale, shape) in seconds or in minutes, and the rate form F = 1 − exp(−α x^β) of older
        // Weibull routines, α = scale^(−β). Durations (e^(a + b²/2) = 420 s for the external default, as the text
        // states) and sizes (h = log2 of 64, 128, 256) are pinned by the chapter, so only the time unit is open.
        let clusters = [
            (InterGridCluster::C64, 3.008, 0.0501, 43.59),
            (InterGridCluster::C128, 3.267, 0.0545, 20.02),
            (InterGridCluster::C256, 6.850, 0.1142, 13.84),
        ];
        for (c, seconds, minutes, rate_form) in clusters {
            let s = Das2Model::local_default(c);
            let load = |m: &Das2Model| m.offered_load(m.size.eq_4_28_mean(), f64::from(c.pes()), c.speed());
            assert!((load(&s) / seconds - 1.0).abs() < 1e-3, "{c:?} seconds: {}", load(&s));
            let min = s.clone().in_unit(InterarrivalUnit::Minutes);
            assert!((load(&min) / minutes - 1.0).abs() < 1e-3, "{c:?} minutes: {}", load(&min));
            let mut rate = s.clone();
            let Dist::Weibull { scale, shape } = s.interarrival else { unreachable!() };
            rate.interarrival = Dist::Weibull { scale: scale.powf(-1.0 / shape), shape };
            assert!((load(&rate) / rate_form - 1.0).abs() < 1e-3, "{c:?} rate form: {}", load(&rate));
            // Only minutes keep a cluster's local load below 1.
            assert!(load(&s) > 1.0 && load(&rate) > 1.0 && load(&min) < 0.2);
        }
        // External requests (5 VMs, 420 s, Weibull(7.0, 1.1)) on the whole grid (64 + 192 + 268.8 PE-equivalents):
        // 59% of it in seconds, 1% in minutes; over two days 25,600 requests (128,000 VMs) against 427 (2,130 VMs).
        let grid: f64 = [InterGridCluster::C64, InterGridCluster::C128, InterGridCluster::C256]
            .iter()
            .map(|c| f64::from(c.pes()) * c.speed())
            .sum();
        let e = Das2Model::external_default().unwrap();
        assert!((e.offered_load(5.0, grid, 1.0) - 0.5924).abs() < 1e-3);
        let e_min = e.clone().in_unit(InterarrivalUnit::Minutes);
        assert!((e_min.offered_load(5.0, grid, 1.0) - 0.009874).abs() < 1e-5);
        let two_days = 2.0 * 86_400.0;
        assert!((5.0 * two_days / e.interarrival.mean() - 127_900.0).abs() < 100.0);
        assert!((5.0 * two_days / e_min.interarrival.mean() - 2_132.0).abs() < 2.0);
    }

    #[test]
    fn das2_generated_moments() {
        let model = Das2Model::external_default().unwrap();
        assert!((model.size.mean() - 5.0).abs() < 1e-9);
        let mut rng = Pcg64Mcg::seed_from_u64(42);
        let w = model.generate(Limit::Jobs(50_000), &mut rng).unwrap();
        let n = w.jobs.len() as f64;
        // Sizes: sd ≈ 8, SE 0.036 → band 0.15. Log-durations: N(4.595, 1.7), SE 0.0076 →
        // band 0.03 on the mean and 0.03 on the sd. Gaps: Weibull(7, 1.1), sd ≈ 6.1, SE 0.027
        // → band 0.11. All about 4 SE.
        let size = mean(w.jobs.iter().map(|j| f64::from(j.pes)));
        assert!((size - 5.0).abs() < 0.15, "{size}");
        let ln = mean(w.jobs.iter().map(|j| j.runtime.ln()));
        let Dist::LogNormal { mu, sigma } = model.duration else { unreachable!() };
        assert!((ln - mu).abs() < 0.03, "{ln}");
        let sd = mean(w.jobs.iter().map(|j| (j.runtime.ln() - ln).powi(2))).sqrt();
        assert!((sd - sigma).abs() < 0.03, "{sd}");
        let gap = w.jobs.last().unwrap().submit / n;
        assert!((gap - 6.75).abs() < 0.11, "{gap}");
        let serial = w.jobs.iter().filter(|j| j.pes == 1).count() as f64 / n;
        assert!((serial - model.size.serial_fraction()).abs() < 0.01);
        assert!(w.jobs.iter().all(|j| j.pes <= 64));
    }

    #[test]
    fn bot_sizes_and_durations() {
        let model = BotModel::external(1.7, 90.0);
        let mut rng = Pcg64Mcg::seed_from_u64(8);
        let w = model.generate(Limit::Jobs(20_000), &mut rng).unwrap();
        let bags = w.jobs.last().unwrap().bot.unwrap();
        assert_eq!(bags, 20_000);
        let tasks = w.jobs.len() as f64 / bags as f64;
        // Expected tasks per bag: E[max(1, round(X))] for X ~ Weibull(1.76, 2.11), summed
        // exactly from the CDF. SE ≈ 0.8/sqrt(20 000) = 0.006; band 0.025.
        let cdf = |x: f64| 1.0 - (-(x / 1.76f64).powf(2.11)).exp();
        let expected: f64 =
            1.0 * cdf(1.5) + (2..40).map(|k| k as f64 * (cdf(k as f64 + 0.5) - cdf(k as f64 - 0.5))).sum::<f64>();
        assert!((tasks - expected).abs() < 0.025, "{tasks} vs {expected}");
        assert!((BotModel::tasks_per_bag().mean() - 1.559).abs() < 0.001);
        // Durations N(90, 6.1): SE 0.04 → band 0.15.
        let d = mean(w.jobs.iter().map(|j| j.runtime));
        assert!((d - 90.0).abs() < 0.15, "{d}");
        // Gaps between bags: Weibull(1.7, 7.86) has mean 0.9409·1.7 = 1.600 s.
        let gap = w.jobs.last().unwrap().submit / bags as f64;
        assert!((gap - 1.600).abs() < 0.005, "{gap}");
        // Tasks of a bag share its submit time and urgency.
        for pair in w.jobs.windows(2).filter(|p| p[0].bot == p[1].bot) {
            assert_eq!(pair[0].submit, pair[1].submit);
            assert_eq!(pair[0].urgency, pair[1].urgency);
        }
        let high = w.jobs.iter().filter(|j| j.urgency.unwrap().class == UrgencyClass::High).count() as f64
            / w.jobs.len() as f64;
        assert!((high - 0.5).abs() < 0.03); // bags, not tasks, are the trials
        assert!((model.mean_work() - 1.559 * 90.0).abs() < 0.2);
    }

    #[test]
    fn whole_bags_are_moldable_requests_with_deadlines() {
        let tasks = BotModel { whole_bags: false, ..BotModel::external(1.7, 90.0) };
        let bags = BotModel { whole_bags: true, ..BotModel::external(1.7, 90.0) };
        let tasks = tasks.generate(Limit::Jobs(2_000), &mut Pcg64Mcg::seed_from_u64(3)).unwrap();
        let bags = bags.generate(Limit::Jobs(2_000), &mut Pcg64Mcg::seed_from_u64(3)).unwrap();
        assert_eq!(bags.jobs.len(), 2_000);
        // The same draws: each bag's work is the sum of its tasks' durations, at its submit time.
        let work = |w: &Workload| w.jobs.iter().map(|j| f64::from(j.pes) * j.runtime).sum::<f64>();
        assert!((work(&bags) - work(&tasks)).abs() < 1e-6 * work(&tasks));
        for j in &bags.jobs {
            let u = j.urgency.unwrap();
            assert!(u.deadline_ratio >= 1.0);
            assert_eq!(j.deadline, Some(j.submit + u.deadline_ratio * j.runtime));
        }
    }

    #[test]
    fn degenerate_gaps_are_errors() {
        let mut rng = Pcg64Mcg::seed_from_u64(0);
        let mut m = Das2Model::local_default(InterGridCluster::C64);
        m.interarrival = Dist::Constant { value: 0.0 };
        assert!(m.generate(Limit::Until(10.0), &mut rng).is_err());
        assert_eq!(m.generate(Limit::Jobs(3), &mut rng).unwrap().jobs.len(), 3);
        m.interarrival = Dist::Normal { mean: 0.0, sd: 1.0 };
        assert!(m.generate(Limit::Jobs(100), &mut rng).is_err());
    }

    #[test]
    fn bot_local_cluster_shifts() {
        let c64 = BotModel::local(4.0, 90.0, InterGridCluster::C64);
        let c256 = BotModel::local(4.0, 90.0, InterGridCluster::C256);
        assert_eq!(c64.interarrival, Dist::Weibull { scale: 5.0, shape: 7.86 });
        assert!((c64.task_duration.mean() - 89.0).abs() < 1e-6);
        assert!((c256.task_duration.mean() - 91.0).abs() < 1e-6);
        assert!(c256.urgency.is_none());
        let w = c256.generate(Limit::Until(2.0 * 86_400.0), &mut Pcg64Mcg::seed_from_u64(1)).unwrap();
        assert!(w.jobs.iter().all(|j| j.submit < 2.0 * 86_400.0));
    }

    #[test]
    fn local_requests_of_ch6() {
        let model = LocalRequestModel::amini_salehi_ch6(0.15, 3.0, LocalSize::Medium, 512);
        let n = model.count();
        assert_eq!(n, 505); // 0.15·512·30 d / (3 h · 36.5)
        let w = model.generate(&mut Pcg64Mcg::seed_from_u64(3)).unwrap();
        assert_eq!(w.jobs.len(), n);
        let work: f64 = w.jobs.iter().map(|j| j.runtime * f64::from(j.pes)).sum();
        let share = work / (512.0 * model.horizon);
        // Each request's work has cv ≈ 0.2; over 505 requests the SE of ρ is ≈ 1.4%
        // relative; band 0.01 absolute (≈ 5 SE).
        assert!((share - 0.15).abs() < 0.01, "{share}");
        assert!(w.jobs.iter().all(|j| (25..=48).contains(&j.pes)));
        assert!(w.jobs.iter().all(|j| (9000.0..=12_600.0).contains(&j.runtime)));
        // Short gaps (ρ = 0.3, δ = 1 h, small) still give ordered, non-negative times.
        let dense = LocalRequestModel::amini_salehi_ch6(0.3, 1.0, LocalSize::Small, 512);
        let w = dense.generate(&mut Pcg64Mcg::seed_from_u64(3)).unwrap();
        assert!(w.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
        assert!(w.jobs.iter().all(|j| j.earliest_start.is_none()), "made when they start");
    }

    #[test]
    fn local_requests_made_a_day_ahead_keep_their_starts() {
        let mut model = LocalRequestModel::amini_salehi_ch6(0.15, 3.0, LocalSize::Medium, 144);
        let at_start = model.generate(&mut Pcg64Mcg::seed_from_u64(5)).unwrap();
        model.notice = 86_400.0;
        let ahead = model.generate(&mut Pcg64Mcg::seed_from_u64(5)).unwrap();
        assert_eq!(ahead.jobs.len(), at_start.jobs.len());
        for (a, s) in ahead.jobs.iter().zip(&at_start.jobs) {
            // The same requests, each made a day before its start, or at 0 in the first day.
            assert_eq!((a.runtime, a.pes, a.earliest_start), (s.runtime, s.pes, Some(s.submit)));
            assert_eq!(a.submit, (s.submit - 86_400.0).max(0.0));
        }
        assert!(ahead.jobs.iter().any(|j| j.submit == 0.0) && ahead.jobs.iter().any(|j| j.submit > 0.0));
        model.notice = -1.0;
        assert!(model.generate(&mut Pcg64Mcg::seed_from_u64(5)).is_err());
    }

    #[test]
    fn meta_broker_jobs() {
        let model = MetaBrokerJobModel::new(DeadlineSlack::Tight, [0.3, 0.3]);
        let w = model.generate(&mut Pcg64Mcg::seed_from_u64(9)).unwrap();
        assert_eq!(w.jobs.len(), 50);
        for (i, j) in w.jobs.iter().enumerate() {
            assert_eq!(j.id, i as u64 + 1);
            assert!((0.0..=20.0).contains(&j.submit));
            assert!(j.pes >= 1);
            assert!(j.deadline.unwrap() >= j.submit + j.runtime);
            assert_eq!(j.budget, Some(2.0 * 4.5 * j.runtime * f64::from(j.pes)));
        }
        let tasks = mean(w.jobs.iter().map(|j| f64::from(j.pes)));
        // 50 jobs, sd 1.5: SE 0.21; band 1.
        assert!((tasks - 5.0).abs() < 1.0, "{tasks}");
        // Each job its own variation in [0.1, 0.5] (Garg 2010 §4.3.1): sd of the tasks sqrt(25 E[v²]) ≈ 1.6, so over
        // 2,000 jobs the mean is within 0.2 of 5 (SE 0.036, the rounding and the cut at 0.5 add a little) and the
        // spread lies between the two extremes' (0.5 and 2.5).
        let wide = MetaBrokerJobModel { jobs: 2000, ..MetaBrokerJobModel::new(DeadlineSlack::Tight, [0.1, 0.5]) };
        let w = wide.generate(&mut Pcg64Mcg::seed_from_u64(9)).unwrap();
        let tasks: Vec<f64> = w.jobs.iter().map(|j| f64::from(j.pes)).collect();
        let m = mean(tasks.iter().copied());
        let sd = (tasks.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 1999.0).sqrt();
        assert!((m - 5.0).abs() < 0.2, "{m}");
        assert!((1.3..1.9).contains(&sd), "{sd}");
    }

    #[test]
    fn advance_reservations() {
        let mut model = AdvanceReservationModel::melendez(1.0 / 3000.0);
        model.on_demand_fraction = 0.2;
        let w = model.generate(Limit::Jobs(10_000), &mut Pcg64Mcg::seed_from_u64(12)).unwrap();
        let od: Vec<_> = w.jobs.iter().filter(|j| j.earliest_start.is_none()).collect();
        // Binomial SE 0.004; band 0.016.
        assert!((od.len() as f64 / 1e4 - 0.2).abs() < 0.016);
        for j in &w.jobs {
            assert!((600.0..5400.0).contains(&j.runtime));
            match j.earliest_start {
                Some(s) => {
                    assert!(s >= j.submit && s <= j.submit + 43_200.0);
                    assert!((j.deadline.unwrap() - (s + j.runtime + 6000.0)).abs() < 1e-6);
                }
                None => {
                    let d = j.submit + j.runtime + 43_200.0 + 300_000.0;
                    assert!((j.deadline.unwrap() - d).abs() < 1e-6);
                }
            }
        }
        // Poisson arrivals at 1/3000 s: mean gap 3000 s, SE 30; band 120.
        let gap = w.jobs.last().unwrap().submit / 1e4;
        assert!((gap - 3000.0).abs() < 120.0, "{gap}");
        let h2 = AdvanceReservationModel {
            service: Dist::h2_balanced(3000.0, 3.0).unwrap(),
            ..AdvanceReservationModel::melendez(1e-4)
        };
        assert!(h2.generate(Limit::Jobs(10), &mut Pcg64Mcg::seed_from_u64(1)).is_ok());
    }
}
