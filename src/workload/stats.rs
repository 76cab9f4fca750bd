//! Summary statistics of a workload, to check a trace or a generated workload against the
//! published characterisations.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Workload;

/// Five-number summary and mean. Quantiles interpolate linearly between order statistics
/// (R's type 7).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Smallest value.
    pub min: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// 75th percentile.
    pub p75: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl Quantiles {
    /// Summary of `values`; `None` when empty.
    pub fn of(mut values: Vec<f64>) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = p * (values.len() - 1) as f64;
            let (lo, frac) = (h.floor() as usize, h.fract());
            let hi = (lo + 1).min(values.len() - 1);
            values[lo] + frac * (values[hi] - values[lo])
        };
        Some(Quantiles {
            min: values[0],
            p25: q(0.25),
            median: q(0.5),
            p75: q(0.75),
            max: values[values.len() - 1],
            mean: values.iter().sum::<f64>() / values.len() as f64,
        })
    }
}

/// Summary statistics of a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadStats {
    /// Number of jobs.
    pub jobs: usize,
    /// Last submit time minus first submit time, s.
    pub span: f64,
    /// Total work, PE·s (Σ pes × runtime).
    pub work: f64,
    /// Fraction of jobs with one PE.
    pub serial_fraction: f64,
    /// Fraction of parallel jobs (more than one PE) whose size is a power of two.
    pub pow2_fraction_parallel: f64,
    /// Job sizes, PEs.
    pub pes: Option<Quantiles>,
    /// Runtimes, s.
    pub runtime: Option<Quantiles>,
    /// Gaps between consecutive submit times (in time order, whatever the order of the jobs), s.
    pub interarrival: Option<Quantiles>,
}

impl WorkloadStats {
    /// Computes the statistics of `w`.
    pub fn of(w: &Workload) -> Self {
        let jobs = w.jobs.len();
        let first = w.jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
        let last = w.jobs.iter().map(|j| j.submit).fold(f64::NEG_INFINITY, f64::max);
        let serial = w.jobs.iter().filter(|j| j.pes == 1).count();
        let parallel = jobs - serial;
        let pow2 = w.jobs.iter().filter(|j| j.pes > 1 && j.pes.is_power_of_two()).count();
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        WorkloadStats {
            jobs,
            span: if jobs == 0 { 0.0 } else { last - first },
            work: w.jobs.iter().map(|j| f64::from(j.pes) * j.runtime).sum(),
            serial_fraction: ratio(serial, jobs),
            pow2_fraction_parallel: ratio(pow2, parallel),
            pes: Quantiles::of(w.jobs.iter().map(|j| f64::from(j.pes)).collect()),
            runtime: Quantiles::of(w.jobs.iter().map(|j| j.runtime).collect()),
            interarrival: Quantiles::of(gaps(w)),
        }
    }

    /// Offered load on `pes_total` PEs: Σ(pes × runtime) / (pes_total × span), the load
    /// definition of `m_lublin99.c`. `None` for an empty span or machine.
    pub fn offered_load(&self, pes_total: u32) -> Option<f64> {
        (self.span > 0.0 && pes_total > 0).then(|| self.work / (f64::from(pes_total) * self.span))
    }
}

/// Gaps between consecutive submit times: a trace need not list its jobs in submit order.
fn gaps(w: &Workload) -> Vec<f64> {
    let mut submits: Vec<f64> = w.jobs.iter().map(|j| j.submit).collect();
    submits.sort_by(f64::total_cmp);
    submits.windows(2).map(|p| p[1] - p[0]).collect()
}

impl fmt::Display for WorkloadStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "jobs                {}", self.jobs)?;
        writeln!(f, "span                {:.0} s ({:.2} days)", self.span, self.span / 86_400.0)?;
        writeln!(f, "work                {:.0} PE-s", self.work)?;
        writeln!(f, "serial              {:.2} %", 100.0 * self.serial_fraction)?;
        writeln!(f, "power of two        {:.2} % of parallel jobs", 100.0 * self.pow2_fraction_parallel)?;
        writeln!(f, "{:<18}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}", "", "min", "p25", "median", "p75", "max", "mean")?;
        for (name, q) in
            [("size (PEs)", self.pes), ("runtime (s)", self.runtime), ("inter-arrival (s)", self.interarrival)]
        {
            match q {
                Some(q) => writeln!(
                    f,
                    "{name:<18}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}",
                    q.min, q.p25, q.median, q.p75, q.max, q.mean
                )?,
                None => writeln!(f, "{name:<18}{:>11}", "-")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::WorkloadJob;
    use super::*;

    #[test]
    fn statistics_of_a_small_workload() {
        let w = Workload::new(vec![
            WorkloadJob::new(1, 0.0, 100.0, 1),
            WorkloadJob::new(2, 10.0, 200.0, 4),
            WorkloadJob::new(3, 30.0, 300.0, 6),
            WorkloadJob::new(4, 100.0, 400.0, 8),
        ]);
        let s = WorkloadStats::of(&w);
        assert_eq!(s.jobs, 4);
        assert_eq!(s.span, 100.0);
        assert_eq!(s.serial_fraction, 0.25);
        assert!((s.pow2_fraction_parallel - 2.0 / 3.0).abs() < 1e-12);
        let pes = s.pes.unwrap();
        assert_eq!((pes.min, pes.median, pes.max, pes.mean), (1.0, 5.0, 8.0, 4.75));
        assert_eq!(pes.p25, 3.25);
        let work = 100.0 + 800.0 + 1800.0 + 3200.0;
        assert_eq!(s.work, work);
        assert_eq!(s.offered_load(10), Some(work / 1000.0));
        assert_eq!(s.offered_load(0), None);
        assert_eq!(s.interarrival.unwrap().max, 70.0);
        let table = s.to_string();
        assert!(table.contains("power of two"), "{table}");
        assert!(table.contains("runtime (s)"), "{table}");
    }

    #[test]
    fn gaps_are_in_time_order() {
        let w = Workload::new(vec![
            WorkloadJob::new(1, 10.0, 1.0, 1),
            WorkloadJob::new(2, 0.0, 1.0, 1),
            WorkloadJob::new(3, 30.0, 1.0, 1),
        ]);
        let gaps = WorkloadStats::of(&w).interarrival.unwrap();
        assert_eq!((gaps.min, gaps.max, gaps.mean), (10.0, 20.0, 15.0));
    }

    #[test]
    fn empty_workload() {
        let s = WorkloadStats::of(&Workload::default());
        assert_eq!((s.jobs, s.span, s.serial_fraction), (0, 0.0, 0.0));
        assert!(s.pes.is_none() && s.offered_load(8).is_none());
        assert!(s.to_string().contains('-'));
    }
}
