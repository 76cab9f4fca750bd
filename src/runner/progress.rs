//! What a study's runs report while they run: on a terminal a bar, elsewhere (a Slurm log, a notebook, a pipe) a
//! line every few seconds; both with the simulated clock of the runs under way, so that a single long run shows that
//! it moves.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::HumanDuration;

/// Seconds between two progress lines when stderr is not a terminal, unless `GRIDMARKET_PROGRESS_EVERY` says.
const EVERY: f64 = 10.0;

/// Runs under way shown by name; the others are counted.
const SHOWN: usize = 4;

/// The runs under way, by (point, replication): the clock their kernel publishes and their horizon.
type UnderWay = BTreeMap<(usize, u32), (Arc<AtomicU64>, Option<f64>)>;

/// The progress of a study's runs, shared by the threads that run them and the one that reports.
pub struct Progress {
    total: u64,
    done: AtomicU64,
    running: Mutex<UnderWay>,
    /// On a terminal; else lines every `every`.
    bar: Option<indicatif::ProgressBar>,
    every: Duration,
    started: Instant,
}

impl Progress {
    /// The progress of `total` runs; none when `quiet`.
    pub fn new(total: u64, quiet: bool) -> Option<Progress> {
        if quiet {
            return None;
        }
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed, eta {eta} {msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        let every = std::env::var("GRIDMARKET_PROGRESS_EVERY")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(EVERY);
        Some(Progress {
            total,
            done: AtomicU64::new(0),
            running: Mutex::new(BTreeMap::new()),
            bar,
            every: Duration::from_secs_f64(every),
            started: Instant::now(),
        })
    }

    /// A run starts: the clock its kernel is to publish into.
    pub fn start(&self, point: usize, rep: u32, horizon: Option<f64>) -> Arc<AtomicU64> {
        let clock = Arc::new(AtomicU64::new(0.0f64.to_bits()));
        self.under_way().insert((point, rep), (clock.clone(), horizon));
        clock
    }

    /// A run has ended (finished or not).
    pub fn end(&self, point: usize, rep: u32) {
        self.under_way().remove(&(point, rep));
        self.done.fetch_add(1, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn under_way(&self) -> std::sync::MutexGuard<'_, UnderWay> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reports until `stop` is set: the bar's message every second, or a line every `every`.
    pub fn report_until(&self, stop: &AtomicBool) {
        let tick = Duration::from_millis(100);
        let mut last = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(tick);
            match &self.bar {
                Some(bar) if last.elapsed() >= Duration::from_secs(1) => {
                    bar.set_message(self.runs_under_way().1);
                    last = Instant::now();
                }
                None if last.elapsed() >= self.every => {
                    eprintln!("{}", self.line());
                    last = Instant::now();
                }
                _ => {}
            }
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// The runs under way, each with how far it is, and the share of its horizon each has run (those with one).
    fn runs_under_way(&self) -> (f64, String) {
        let running = self.under_way();
        let mut share = 0.0;
        let mut shown = Vec::new();
        for (&(point, rep), (clock, horizon)) in running.iter() {
            let t = f64::from_bits(clock.load(Ordering::Relaxed));
            let at = match horizon {
                Some(h) if *h > 0.0 => {
                    share += (t / h).clamp(0.0, 1.0);
                    format!("{:.0}% of its horizon", 100.0 * (t / h).clamp(0.0, 1.0))
                }
                _ => {
                    let (scale, unit) = crate::plot::time_unit(t);
                    format!("t = {:.1} {unit}", t / scale)
                }
            };
            if shown.len() < SHOWN {
                shown.push(format!("p{point}/r{rep} at {at}"));
            }
        }
        if running.len() > shown.len() {
            shown.push(format!("{} more", running.len() - shown.len()));
        }
        (share, shown.join(", "))
    }

    /// One line of progress: runs done, time spent and left, and the runs under way.
    fn line(&self) -> String {
        let done = self.done.load(Ordering::Relaxed);
        let (share, under_way) = self.runs_under_way();
        let elapsed = self.started.elapsed();
        let mut line = format!("progress: {done} of {} runs done, {} elapsed", self.total, HumanDuration(elapsed));
        // Runs under way count by the share of their horizon run so far.
        let progressed = done as f64 + share;
        if progressed > 0.0 && done < self.total {
            let left = elapsed.as_secs_f64() * (self.total as f64 - progressed) / progressed;
            let _ = write!(line, ", about {} left", HumanDuration(Duration::from_secs_f64(left.max(0.0))));
        }
        if !under_way.is_empty() {
            let _ = write!(line, "; under way: {under_way}");
        }
        line
    }
}
