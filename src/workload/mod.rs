//! Workloads: trace readers and writers, synthetic workload models and summary statistics.
//!
//! Every study the simulator reproduces feeds it a stream of jobs, either replayed from a
//! trace or drawn from a published model:
//!
//! - [`swf`]: the Standard Workload Format of the Parallel Workloads Archive (18 fields).
//! - [`gwf`]: the Grid Workloads Archive format (29 fields, plus OurSim's 30-field variant).
//! - [`csv`]: job lists in CSV, for hand-made cases.
//! - [`lublin`]: the Lublin & Feitelson (2003) rigid-job model, as coded in `m_lublin99.c`.
//! - [`models`]: the study-specific models (DAS-2 model, GWA bag-of-tasks model, the
//!   meta-broker jobs of Garg (2010), the advance reservations of Melendez (2010), the local-request
//!   interleaver of Amini Salehi (2012) ch6).
//! - [`qos`]: deadline, budget, valuation and urgency generators.
//! - [`dist`]: a serde-friendly description of the distributions those models use.
//! - [`stats`]: summary statistics and offered load.
//!
//! All generators take the caller's random number generator, so a workload is a pure
//! function of the seed. Times are seconds as `f64`; sizes are processing elements (PEs). Every reader takes
//! gzip-compressed files too ([`open`]).

pub mod csv;
pub mod dist;
mod error;
pub mod gwf;
pub mod lublin;
pub(crate) mod math;
pub mod models;
mod parse;
pub mod qos;
pub mod stats;
pub mod swf;

use std::collections::BTreeMap;

use agents::registry::limits::MAX_JOBS;
use serde::{Deserialize, Serialize};

pub use error::WorkloadError;
pub use parse::{decompressed, open};

/// Seconds in one week, for the week windows used by Garg (2010) (first or second trace week).
pub const WEEK: f64 = 7.0 * 86_400.0;

/// Final state of a job, as coded in SWF field 11 and GWF field 11.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobStatus {
    /// Code 0: the job failed.
    Failed,
    /// Code 1: the job completed normally.
    Completed,
    /// Code 2: a partial execution that will be continued (checkpoint or swap).
    Partial,
    /// Code 3: the last partial execution, which completed.
    LastPartialCompleted,
    /// Code 4: the last partial execution, which failed.
    LastPartialFailed,
    /// Code 5: the job was cancelled.
    Cancelled,
}

impl JobStatus {
    /// The status for an SWF/GWF code, if the code is defined.
    pub fn from_code(code: i64) -> Option<Self> {
        Some(match code {
            0 => JobStatus::Failed,
            1 => JobStatus::Completed,
            2 => JobStatus::Partial,
            3 => JobStatus::LastPartialCompleted,
            4 => JobStatus::LastPartialFailed,
            5 => JobStatus::Cancelled,
            _ => return None,
        })
    }

    /// The SWF/GWF code of this status.
    pub fn code(self) -> i64 {
        match self {
            JobStatus::Failed => 0,
            JobStatus::Completed => 1,
            JobStatus::Partial => 2,
            JobStatus::LastPartialCompleted => 3,
            JobStatus::LastPartialFailed => 4,
            JobStatus::Cancelled => 5,
        }
    }
}

/// Batch or interactive, following the SWF convention that queue 0 is interactive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobType {
    /// Queue 0.
    Interactive,
    /// Any other queue; the Lublin model writes 1.
    Batch,
}

impl JobType {
    /// The queue number the Lublin model writes for this type (`m_lublin99.c`: 0 or 1).
    pub fn queue(self) -> u32 {
        match self {
            JobType::Interactive => 0,
            JobType::Batch => 1,
        }
    }
}

/// Urgency class of a deadline-constrained request (Amini Salehi 2012, ch5, Amini Salehi, Javadi & Buyya, Garg (2010)
/// ch6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UrgencyClass {
    /// High urgency: a low deadline/runtime ratio.
    High,
    /// Low urgency: a high deadline/runtime ratio.
    Low,
}

/// Urgency of a request: its class and its deadline ratio = (deadline − submit) / runtime.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Urgency {
    /// High or low urgency.
    pub class: UrgencyClass,
    /// Deadline/runtime ratio drawn for this request.
    pub deadline_ratio: f64,
}

impl Urgency {
    /// Absolute deadline `submit + ratio × runtime` (Amini Salehi, Javadi & Buyya, §A.6; Garg (2010) §6.5).
    ///
    /// For moldable bag-of-tasks requests the runtime is the undisturbed duration on the
    /// cluster that runs it, which is only known at dispatch; hence this helper.
    pub fn deadline(&self, submit: f64, runtime: f64) -> f64 {
        submit + self.deadline_ratio * runtime
    }
}

/// One job (request) of a workload: the SWF fields, the grid fields of GWF and the QoS
/// attributes that the market studies attach.
///
/// `None` means unknown (SWF/GWF −1) or not applicable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadJob {
    /// Job number (SWF field 1).
    pub id: u64,
    /// Submit time, s (field 2).
    pub submit: f64,
    /// Wait time in the original system, s (field 3).
    pub wait: Option<f64>,
    /// Actual run time, s (field 4).
    pub runtime: f64,
    /// Allocated processors (field 5; falls back to field 8 when unknown).
    pub pes: u32,
    /// Average CPU time used per processor, s (field 6).
    pub avg_cpu_time: Option<f64>,
    /// Used memory, KB per processor (field 7).
    pub used_memory: Option<f64>,
    /// Requested processors (field 8).
    pub requested_pes: Option<u32>,
    /// Requested (estimated) time, s (field 9).
    pub requested_time: Option<f64>,
    /// Requested memory, KB per processor (field 10).
    pub requested_memory: Option<f64>,
    /// Final status (field 11).
    pub status: Option<JobStatus>,
    /// User (field 12; GWF strings are interned, see [`Workload::labels`]).
    pub user: Option<u32>,
    /// Group (field 13).
    pub group: Option<u32>,
    /// Executable (application) number (field 14).
    pub executable: Option<u32>,
    /// Queue number (field 15); 0 means interactive by SWF convention.
    pub queue: Option<u32>,
    /// Partition number (field 16).
    pub partition: Option<u32>,
    /// Preceding job number (field 17).
    pub preceding_job: Option<u64>,
    /// Think time from the preceding job, s (field 18).
    pub think_time: Option<f64>,
    /// Submission site (GWF OrigSiteID, interned).
    pub orig_site: Option<u32>,
    /// Lease type a scenario assigns (Amini Salehi 2012, ch3); `None` for a plain job.
    pub lease: Option<agents::protocol::LeaseType>,
    /// Priority class a scenario assigns, 0 the highest.
    pub priority: u8,
    /// Execution site (GWF LastRunSiteID, interned).
    pub run_site: Option<u32>,
    /// Bag-of-tasks batch id (GWF JobStructureParams when JobStructure is BoT).
    pub bot: Option<u64>,
    /// Earliest start time of an advance reservation, s (Melendez 2010); `None` starts at submit.
    pub earliest_start: Option<f64>,
    /// Absolute deadline, s.
    pub deadline: Option<f64>,
    /// Budget, currency units (Garg 2010, ch3–4).
    pub budget: Option<f64>,
    /// Initial valuation, currency units (Garg 2010, ch7).
    pub valuation: Option<f64>,
    /// Urgency class and deadline ratio (Amini Salehi 2012, ch5, Amini Salehi, Javadi & Buyya, Garg (2010) ch6).
    pub urgency: Option<Urgency>,
    /// Data moved in and out \[GB\] (Garg 2010, ch6).
    pub data: Option<f64>,
}

impl WorkloadJob {
    /// A job with the four mandatory fields; everything else unknown.
    pub fn new(id: u64, submit: f64, runtime: f64, pes: u32) -> Self {
        WorkloadJob { id, submit, runtime, pes, ..WorkloadJob::default() }
    }

    /// Batch or interactive, from the queue number (SWF convention: queue 0 is interactive).
    pub fn job_type(&self) -> Option<JobType> {
        self.queue.map(|q| if q == 0 { JobType::Interactive } else { JobType::Batch })
    }

    /// Shifts every absolute time (submit, earliest start, deadline) by `delta` seconds.
    fn shift(&mut self, delta: f64) {
        self.submit += delta;
        if let Some(s) = self.earliest_start.as_mut() {
            *s += delta;
        }
        if let Some(d) = self.deadline.as_mut() {
            *d += delta;
        }
    }
}

/// What to do with jobs larger than the target cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OversizePolicy {
    /// Remove them (Garg 2010, ch5: jobs larger than every site cannot run).
    Drop,
    /// Reduce their size to the cluster size.
    Clamp,
}

/// When a generator stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Limit {
    /// After this many jobs (requests, for bag-of-tasks models).
    Jobs(usize),
    /// At the first arrival at or after this time, s (e.g. the two-day workloads of Amini Salehi 2012).
    Until(f64),
    /// At whichever of the two comes first.
    JobsUntil(usize, f64),
}

impl Limit {
    /// Rejects horizons that would never end.
    pub(crate) fn validate(self) -> Result<(), WorkloadError> {
        match self {
            Limit::Until(t) | Limit::JobsUntil(_, t) if !(t.is_finite() && t >= 0.0) => {
                Err(WorkloadError::param("Limit::Until", format!("horizon must be finite and non-negative, got {t}")))
            }
            _ => Ok(()),
        }
    }

    /// True when a job number `count` (0-based) arriving at `t` is beyond the limit. A horizon stops at
    /// [`MAX_JOBS`] arrivals too, which the caller reports ([`Limit::check`]).
    pub fn reached(self, count: usize, t: f64) -> bool {
        match self {
            Limit::Jobs(n) => count >= n,
            Limit::Until(h) => t >= h || count as u64 >= MAX_JOBS,
            Limit::JobsUntil(n, h) => count >= n || t >= h,
        }
    }

    /// Refuses what a generator made under this limit when it is more than [`MAX_JOBS`] jobs, or when a horizon
    /// stopped at [`MAX_JOBS`] arrivals before its time.
    pub fn check(self, jobs: usize) -> Result<(), WorkloadError> {
        let stopped = matches!(self, Limit::Until(_)) && jobs as u64 >= MAX_JOBS;
        if jobs as u64 > MAX_JOBS || stopped {
            let m = format!("more than {MAX_JOBS} jobs, the limit per workload");
            return Err(WorkloadError::param("jobs", m));
        }
        Ok(())
    }
}

/// Records of a trace that cannot be simulated (unknown submit time or runtime, no processor count, a runtime of 0
/// with no positive requested time: jobs cancelled before they ran are logged so) and were left out by the reader.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many.
    pub count: u64,
    /// The line of the first.
    pub first_line: Option<u64>,
}

impl Skipped {
    /// "3 records ... left out, the first at line 12", or `None` when none were.
    pub fn note(&self) -> Option<String> {
        let first = self.first_line?;
        Some(format!(
            "{} record(s) cannot be simulated (unknown submit time or runtime, no processor count, or a runtime of 0 \
             with no positive requested time: jobs cancelled before they ran) and are left out, the first at line \
             {first}; the other jobs keep their numbers",
            self.count
        ))
    }
}

/// A workload: header metadata and jobs in submit order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Workload {
    /// Header comments as `(key, value)` pairs in file order (`; MaxProcs: 128`).
    /// Free-text comment lines have an empty key. Repeated keys (e.g. `Note`) are kept.
    pub header: Vec<(String, String)>,
    /// Names behind interned identifiers, per kind ("UserID", "GroupID", "SiteID"):
    /// `labels["UserID"][3]` is the GWF string that became user 3.
    pub labels: BTreeMap<String, Vec<String>>,
    /// The jobs.
    pub jobs: Vec<WorkloadJob>,
    /// The records of the trace it was read from that were left out.
    #[serde(skip)]
    pub skipped: Skipped,
}

impl Workload {
    /// A workload without header.
    pub fn new(jobs: Vec<WorkloadJob>) -> Self {
        Workload { jobs, ..Workload::default() }
    }

    /// First header value for `key` (case-insensitive), e.g. `MaxProcs`.
    pub fn header_value(&self, key: &str) -> Option<&str> {
        self.header.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }

    /// Numeric header value, e.g. `MaxJobs`, `MaxProcs`, `MaxNodes`, `MaxRuntime`.
    pub fn header_number(&self, key: &str) -> Option<f64> {
        self.header_value(key)?.trim().parse().ok()
    }

    /// Sets (or replaces) a header entry.
    pub fn set_header(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.header.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
            Some(entry) => entry.1 = value,
            None => self.header.push((key.to_string(), value)),
        }
    }

    /// Sorts jobs by submit time, keeping file order among equal times.
    pub fn sort_by_submit(&mut self) {
        self.jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit));
    }

    /// Multiplies every submit time by `factor`, i.e. scales inter-arrival times.
    ///
    /// Garg (2010) divides LLNL Thunder submit times by 10…10 000 (ch6) or 1000 (ch7), i.e.
    /// `factor = 1/10` etc. Earliest starts and deadlines keep their offset from submit.
    pub fn scale_submit(&mut self, factor: f64) -> Result<(), WorkloadError> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(WorkloadError::param("factor", format!("must be finite and positive, got {factor}")));
        }
        for job in &mut self.jobs {
            job.shift(job.submit * factor - job.submit);
        }
        Ok(())
    }

    /// Maps every runtime r to `r × scale + offset`, and every requested time (estimate) the same way, so that an
    /// estimate stays on the same side of its runtime (e.g. a trace replayed on PEs twice as fast: `scale` 0.5).
    pub fn transform_runtimes(&mut self, scale: f64, offset: f64) -> Result<(), WorkloadError> {
        if !(scale.is_finite() && scale > 0.0 && offset.is_finite() && offset >= 0.0) {
            let m = format!("need a finite scale > 0 and offset >= 0, got {scale} and {offset}");
            return Err(WorkloadError::param("runtimes", m));
        }
        for job in &mut self.jobs {
            job.runtime = job.runtime * scale + offset;
            if let Some(t) = job.requested_time.as_mut() {
                *t = *t * scale + offset;
            }
        }
        Ok(())
    }

    /// The jobs submitted in `[from, to)`, with times re-based so that `from` becomes 0.
    ///
    /// Job numbers are kept so that results can be traced back to the original log.
    pub fn window(&self, from: f64, to: f64) -> Result<Workload, WorkloadError> {
        if !(from.is_finite() && to.is_finite() && from <= to) {
            return Err(WorkloadError::param("window", format!("need finite from <= to, got [{from}, {to})")));
        }
        Ok(self.slice(from, to))
    }

    /// Week `index` of the trace (0 = first week), re-based to 0 (Garg 2010, ch6/ch7).
    pub fn week(&self, index: u32) -> Workload {
        let from = f64::from(index) * WEEK;
        self.slice(from, from + WEEK)
    }

    fn slice(&self, from: f64, to: f64) -> Workload {
        let jobs = self
            .jobs
            .iter()
            .filter(|j| j.submit >= from && j.submit < to)
            .map(|j| {
                let mut j = j.clone();
                j.shift(-from);
                j
            })
            .collect();
        Workload { header: self.header.clone(), labels: self.labels.clone(), jobs, skipped: self.skipped }
    }

    /// Keeps the first `n` jobs.
    pub fn truncate(&mut self, n: usize) {
        self.jobs.truncate(n);
    }

    /// Splits every job of p PEs into p one-PE jobs with its submit time, runtime and the rest of its record,
    /// numbered 1, 2, … in order (Asaduzzaman & Maheswaran run a job's threads as independent jobs, one resource
    /// each). Refused past [`MAX_JOBS`] jobs.
    pub fn split_per_pe(&mut self) -> Result<(), WorkloadError> {
        let total: u64 = self.jobs.iter().map(|j| u64::from(j.pes)).sum();
        if total > MAX_JOBS {
            return Err(WorkloadError::param(
                "per-pe",
                format!("splitting makes {total} one-PE jobs, more than {MAX_JOBS}"),
            ));
        }
        let mut split = Vec::with_capacity(total as usize);
        for job in self.jobs.drain(..) {
            for _ in 0..job.pes {
                let mut one = job.clone();
                one.id = split.len() as u64 + 1;
                one.pes = 1;
                one.requested_pes = one.requested_pes.map(|_| 1);
                split.push(one);
            }
        }
        self.jobs = split;
        Ok(())
    }

    /// Makes every job fit a cluster of `max_pes`; returns how many jobs were affected.
    pub fn fit_to_cluster(&mut self, max_pes: u32, policy: OversizePolicy) -> usize {
        let before = self.jobs.len();
        match policy {
            OversizePolicy::Drop => {
                self.jobs.retain(|j| j.pes <= max_pes);
                before - self.jobs.len()
            }
            OversizePolicy::Clamp => {
                let mut clamped = 0;
                for job in self.jobs.iter_mut().filter(|j| j.pes > max_pes) {
                    job.pes = max_pes;
                    clamped += 1;
                }
                clamped
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(submits: &[f64]) -> Workload {
        Workload::new(
            submits.iter().enumerate().map(|(i, &s)| WorkloadJob::new(i as u64 + 1, s, 10.0, 1 << i)).collect(),
        )
    }

    #[test]
    fn split_per_pe_makes_one_pe_jobs_of_the_same_submit_and_runtime() {
        // Sizes 1, 2 and 4 PEs.
        let mut w = jobs(&[0.0, 5.0, 7.0]);
        w.jobs[1].runtime = 30.0;
        w.split_per_pe().unwrap();
        let got: Vec<(u64, f64, f64, u32)> = w.jobs.iter().map(|j| (j.id, j.submit, j.runtime, j.pes)).collect();
        let mut want = vec![(1, 0.0, 10.0, 1), (2, 5.0, 30.0, 1), (3, 5.0, 30.0, 1)];
        want.extend((4..8).map(|id| (id, 7.0, 10.0, 1)));
        assert_eq!(got, want);
        let pe_seconds = |w: &Workload| w.jobs.iter().map(|j| f64::from(j.pes) * j.runtime).sum::<f64>();
        assert_eq!(pe_seconds(&w), 10.0 + 60.0 + 40.0, "the work is kept");
    }

    #[test]
    fn scale_submit_keeps_relative_deadlines() {
        let mut w = jobs(&[0.0, 100.0]);
        w.jobs[1].deadline = Some(150.0);
        w.jobs[1].earliest_start = Some(120.0);
        w.scale_submit(0.1).unwrap();
        assert_eq!(w.jobs[1].submit, 10.0);
        assert_eq!(w.jobs[1].deadline, Some(60.0));
        assert_eq!(w.jobs[1].earliest_start, Some(30.0));
        assert!(w.scale_submit(0.0).is_err());
        assert!(w.scale_submit(f64::NAN).is_err());
    }

    #[test]
    fn runtimes_and_estimates_scale_and_shift_together() {
        let mut w = jobs(&[0.0, 5.0]);
        w.jobs[1].requested_time = Some(30.0);
        w.transform_runtimes(0.5, 10.0).unwrap();
        assert_eq!(w.jobs.iter().map(|j| j.runtime).collect::<Vec<_>>(), [15.0, 15.0]);
        assert_eq!((w.jobs[0].requested_time, w.jobs[1].requested_time), (None, Some(25.0)));
        // Submit times are untouched.
        assert_eq!(w.jobs[1].submit, 5.0);
        assert!(w.transform_runtimes(0.0, 1.0).is_err());
        assert!(w.transform_runtimes(1.0, -1.0).is_err());
    }

    #[test]
    fn windows_rebase_and_keep_ids() {
        let w = jobs(&[0.0, WEEK - 1.0, WEEK, WEEK + 5.0, 2.0 * WEEK]);
        let second = w.week(1);
        assert_eq!(second.jobs.len(), 2);
        assert_eq!(second.jobs[0].id, 3);
        assert_eq!(second.jobs[0].submit, 0.0);
        assert_eq!(second.jobs[1].submit, 5.0);
        let first = w.window(0.0, WEEK).unwrap();
        assert_eq!(first.jobs.len(), 2);
        assert!(w.window(5.0, 1.0).is_err());
    }

    #[test]
    fn truncate_and_fit_to_cluster() {
        let mut w = jobs(&[0.0, 1.0, 2.0, 3.0]); // sizes 1, 2, 4, 8
        let mut clamped = w.clone();
        assert_eq!(clamped.fit_to_cluster(3, OversizePolicy::Clamp), 2);
        assert_eq!(clamped.jobs.iter().map(|j| j.pes).collect::<Vec<_>>(), [1, 2, 3, 3]);
        assert_eq!(w.fit_to_cluster(3, OversizePolicy::Drop), 2);
        assert_eq!(w.jobs.len(), 2);
        w.truncate(1);
        assert_eq!(w.jobs.len(), 1);
    }

    #[test]
    fn job_serde_round_trip() {
        let job = WorkloadJob {
            urgency: Some(Urgency { class: UrgencyClass::High, deadline_ratio: 2.5 }),
            deadline: Some(25.0),
            bot: Some(3),
            ..WorkloadJob::new(1, 0.0, 10.0, 4)
        };
        let json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<WorkloadJob>(&json).unwrap(), job);
        // Missing fields take their defaults.
        let sparse: WorkloadJob = serde_json::from_str(r#"{"id":7,"submit":1.5,"runtime":3,"pes":2}"#).unwrap();
        assert_eq!(sparse, WorkloadJob::new(7, 1.5, 3.0, 2));
        assert_eq!(Urgency { class: UrgencyClass::Low, deadline_ratio: 4.0 }.deadline(10.0, 5.0), 30.0);
    }

    #[test]
    fn header_lookup_is_case_insensitive() {
        let mut w = Workload::default();
        w.set_header("MaxProcs", "128");
        w.set_header("maxprocs", "256");
        assert_eq!(w.header.len(), 1);
        assert_eq!(w.header_number("MAXPROCS"), Some(256.0));
        assert_eq!(w.header_value("MaxJobs"), None);
    }

    #[test]
    fn job_type_follows_queue_convention() {
        let mut j = WorkloadJob::new(1, 0.0, 1.0, 1);
        assert_eq!(j.job_type(), None);
        j.queue = Some(0);
        assert_eq!(j.job_type(), Some(JobType::Interactive));
        j.queue = Some(JobType::Batch.queue());
        assert_eq!(j.job_type(), Some(JobType::Batch));
        assert_eq!(JobStatus::from_code(5), Some(JobStatus::Cancelled));
        assert_eq!(JobStatus::from_code(7), None);
        assert_eq!(JobStatus::Partial.code(), 2);
    }
}
