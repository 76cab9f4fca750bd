//! Caps on what a scenario may ask for. Each is checked before anything is allocated or scheduled for it, so a bad
//! number is refused with its key and the cap rather than exhausting memory, hanging or panicking in an agent. The
//! caps are generous for research use; every key they apply to says so in `gridmarket schema`.

/// Agents of one scenario, summed over its groups: each is an actor with its own state and mailbox.
pub const MAX_AGENTS: usize = 100_000;

/// Jobs of one workload (generated, or read from a trace): ten times the largest archive traces. A job takes about a
/// kilobyte over a run, from its draw to its row in `jobs.csv`, so a run at the cap needs about 10 GB.
pub const MAX_JOBS: u64 = 10_000_000;

/// Points of a sweep (the product of the numbers of values of its keys), each checked before anything runs.
pub const MAX_SWEEP_POINTS: usize = 10_000;

/// Replications of a sweep point.
pub const MAX_REPLICATIONS: u32 = 10_000;

/// Runs of a study, sweep points × replications: each keeps its metrics in memory for the summaries.
pub const MAX_RUNS: u64 = 100_000;

/// Samples of `timeseries.csv` per provider over a run's horizon.
pub const MAX_SAMPLES: f64 = 1e6;

/// Rows of one run's `timeseries.csv` (samples × providers), about a hundred bytes each in memory: a run with more
/// (a long drained run, many providers) is sampled less often.
pub const MAX_TIMESERIES_ROWS: usize = 1_000_000;

/// Size of a scenario or profile file \[bytes\]: such files are written by hand or by a short script.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Length of one line of a trace \[bytes\]: an SWF or GWF record is a few hundred bytes.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Longest time or duration \[s\] a scenario or trace may give (about 31,700 years): up to it, times keep a
/// resolution of 0.2 ms, so a job of a millisecond still ends after it starts.
pub const MAX_TIME: f64 = 1e12;

/// Shortest mean runtime \[s\] of a runtime distribution.
pub const MIN_MEAN_RUNTIME: f64 = 1e-6;

/// Events of what agents do periodically over a run's horizon (rounds, price revisions, advertisements, epochs:
/// [`super::GroupSpec::periods`]), summed over the agents: a millisecond's period over years would otherwise run
/// out of memory or time before the first job ends.
pub const MAX_PERIODIC_EVENTS: f64 = 1e8;

/// Shortest round or scheduling interval \[s\]: shorter ones would repeat their rounds millions of times a simulated
/// second (or, below the clock's resolution, at one instant for ever).
pub const MIN_INTERVAL: f64 = 1e-3;

/// Slowest and fastest PE speed relative to the reference PE.
pub const SPEEDS: (f64, f64) = (1e-3, 1e3);

/// Highest price [G$ per PE-second].
pub const MAX_PRICE: f64 = 1e6;

/// Lowest and highest arrival rate [1/s] of a Poisson workload: the mean gap stays within [`MAX_TIME`].
pub const RATES: (f64, f64) = (1e-9, 1e6);

/// Smallest and largest factor a workload's submit times are multiplied by (`time-scale`).
pub const TIME_SCALES: (f64, f64) = (1e-6, 1e6);

/// Memory of one VM \[MB\] at most (a petabyte).
pub const MAX_VM_MEMORY: f64 = 1e9;

/// `x` briefly: plain from 1e-4 to 1e6, else the shorter of plain and scientific form (`1e300`, `2.5e-12`,
/// `1e12`), so that a message never prints a number as hundreds of digits.
pub fn short(x: f64) -> String {
    let plain = format!("{x}");
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        return plain;
    }
    let sci = format!("{x:e}");
    if sci.len() < plain.len() { sci } else { plain }
}

/// A computed `x` (a mean, an estimate) to three significant digits, as [`short`] writes it: `1.6`, `1.56e7`.
pub fn approx(x: f64) -> String {
    short(format!("{x:.2e}").parse().unwrap_or(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(1e300), "1e300");
        assert_eq!(short(1e-300), "1e-300");
        assert_eq!(short(1e12), "1e12");
        assert_eq!(short(3.7e6), "3.7e6");
        assert_eq!(short(123456.5), "123456.5");
        assert_eq!(short(1234567891234.0), "1234567891234");
        assert_eq!(short(-2.5e20), "-2.5e20");
        assert_eq!(short(0.001), "0.001");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(f64::NAN), "NaN");
        assert_eq!(approx(1.5995839108689807), "1.6");
        assert_eq!(approx(15587753.0), "1.56e7");
        assert_eq!(approx(526.5733289494835), "527");
    }
}
