//! Traces and job lists, `model = "swf"`, `"gwf"` or `"csv"`: the jobs of a file, in the Standard Workload Format
//! of the Parallel Workloads Archive (Feitelson, Tsafrir & Krakov (2014), "Experience with using the Parallel
//! Workloads Archive"), the Grid Workloads Format of the Grid Workloads Archive (Iosup et al. (2008), "The Grid
//! Workloads Archive"), or a CSV job list.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use agents::registry::limits::{MAX_TIME, approx, short};
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::registry::{self, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::{Limit, Skipped, Workload, WorkloadError, WorkloadJob, csv, gwf, swf};

/// A file format of jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The Standard Workload Format.
    Swf,
    /// The Grid Workloads Format.
    Gwf,
    /// A job list in CSV.
    Csv,
}

/// A trace or job list in one format.
pub struct TraceModel {
    name: &'static str,
    about: &'static str,
    format: Format,
}

/// `model = "swf"`.
pub static SWF: TraceModel =
    TraceModel { name: "swf", about: "A Standard Workload Format trace (`file`).", format: Format::Swf };
/// `model = "gwf"`.
pub static GWF: TraceModel =
    TraceModel { name: "gwf", about: "A Grid Workloads Format trace (`file`).", format: Format::Gwf };
/// `model = "csv"`.
pub static CSV: TraceModel =
    TraceModel { name: "csv", about: "A job list in CSV (`file`), for hand-made cases.", format: Format::Csv };

impl WorkloadModel for TraceModel {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawTrace>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawTrace::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        let keys = agents::registry::parse::<RawTrace>(keys)?;
        Ok(Box::new(TraceKeys { format: self.format, keys }))
    }

    fn extent(&self) -> Extent {
        Extent::Neither
    }
}

/// A trace's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTrace {
    /// Swf/gwf/csv: the trace or job list, relative to the scenario file; a gzip-compressed file (`.swf.gz`) is read
    /// as it is. A CSV job list has a header row naming its columns, in any order: `submit` \[s\], `cpus` and `runtime`
    /// \[s\] are required; `estimate` \[s\], `deadline` [s, absolute] and `budget` [G$] are optional, an empty cell
    /// leaving the job without. Its jobs are numbered 1, 2, … in row order.
    pub file: Option<String>,
}

/// A trace's keys and its format.
#[derive(Debug)]
struct TraceKeys {
    format: Format,
    keys: RawTrace,
}

impl RawModel for TraceKeys {
    fn check(&self, cx: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let Some(file) = &self.keys.file else { return Err(("file".into(), "required".into())) };
        let path = cx.base.join(file);
        let trace = match cx.traces.0.get(&path) {
            Some(t) => t.clone(),
            None => {
                let t = Trace::check(path.clone(), self.format);
                let t = Arc::new(t.map_err(|e| ("file".to_string(), e.to_string()))?);
                cx.traces.0.insert(path, t.clone());
                t
            }
        };
        let shared = cx.shared;
        // At most the latest submit time of the window, re-based to its start.
        let [from, to] = shared.window.unwrap_or([0.0, f64::INFINITY]);
        let last = (trace.last_submit.min(to) - from).max(0.0);
        let scale = shared.time_scale.map_or(1.0, |f| f.0);
        if last * scale > MAX_TIME {
            let m = format!("makes the last submit time {} s, more than {} s", approx(last * scale), short(MAX_TIME));
            return Err(("time-scale".into(), m));
        }
        let offset = shared.runtime_offset.map_or(0.0, |d| d.0);
        let longest = trace.longest * shared.runtime_scale.map_or(1.0, |f| f.0) + offset;
        if longest > MAX_TIME {
            let key = if offset > MAX_TIME / 2.0 { "runtime-offset" } else { "runtime-scale" };
            let m = format!("makes the longest runtime {} s, more than {} s", approx(longest), short(MAX_TIME));
            return Err((key.into(), m));
        }
        Ok(Arc::new(TraceSpec { file: file.clone(), trace }))
    }
}

/// A checked trace: its file as the scenario names it, and the records.
#[derive(Debug)]
struct TraceSpec {
    file: String,
    trace: Arc<Trace>,
}

impl ModelSpec for TraceSpec {
    /// The trace's jobs, whatever `limit` (a trace has as many as it has).
    fn generate(&self, _: Limit, _: &mut SimRng) -> Result<Arc<Workload>, String> {
        self.trace.jobs()
    }

    fn note(&self) -> Option<String> {
        Some(format!("{}: {}", self.file, self.trace.skipped.note()?))
    }
}

/// The trace files of a study, by path: each is checked once, whatever the number of sweep points naming it.
#[derive(Debug, Default)]
pub struct TraceCache(BTreeMap<PathBuf, Arc<Trace>>);

/// A trace file: checked record by record when the scenario is loaded, keeping none of them (validating builds no
/// workload), then read by the first run that needs its jobs and shared by every run dealing them at the same time;
/// once no run holds them they are freed (a run keeps its jobs only until it has dealt them to its brokers), and the
/// next run reads the file again.
#[derive(Debug)]
struct Trace {
    path: PathBuf,
    /// Its format.
    format: Format,
    /// The latest submit time [s].
    last_submit: f64,
    /// The longest runtime [s].
    longest: f64,
    /// The records left out.
    skipped: Skipped,
    jobs: Mutex<Weak<Workload>>,
}

impl Trace {
    /// Reads every record of the file at `path` (in `format`), keeping what the checks of a workload
    /// need.
    fn check(path: PathBuf, format: Format) -> Result<Trace, WorkloadError> {
        let name = path.display().to_string();
        let reader = crate::workload::open(&path)?;
        let (mut last_submit, mut longest, mut jobs) = (0.0f64, 0.0f64, 0u64);
        let mut see = |job: WorkloadJob| {
            last_submit = last_submit.max(job.submit);
            longest = longest.max(job.runtime);
            jobs += 1;
        };
        let skipped = match format {
            Format::Gwf => {
                let mut records = gwf::GwfReader::new(reader, name);
                for job in records.by_ref() {
                    see(job?);
                }
                records.skipped()
            }
            Format::Csv => {
                let w = csv::read_csv(reader, &name)?;
                let skipped = w.skipped;
                w.jobs.into_iter().for_each(see);
                skipped
            }
            Format::Swf => {
                let mut records = swf::SwfReader::new(reader, name);
                for job in records.by_ref() {
                    see(job?);
                }
                records.skipped()
            }
        };
        if jobs == 0 {
            let left = skipped.note().map_or(String::new(), |n| format!(" ({n})"));
            let message = format!("no job to simulate{left}");
            return Err(WorkloadError::Line {
                file: path.display().to_string(),
                line: skipped.first_line.unwrap_or(1),
                message,
            });
        }
        Ok(Trace { path, format, last_submit, longest, skipped, jobs: Mutex::new(Weak::new()) })
    }

    /// Its jobs: those another run holds, or else read from the file.
    fn jobs(&self) -> Result<Arc<Workload>, String> {
        // A run that panicked while reading leaves nothing half-done behind the lock.
        let mut shared = self.jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(w) = shared.upgrade() {
            return Ok(w);
        }
        let mut w = match self.format {
            Format::Gwf => gwf::read_gwf_file(&self.path),
            Format::Csv => csv::read_csv_file(&self.path),
            Format::Swf => swf::read_swf_file(&self.path),
        }
        .map_err(|e| e.to_string())?;
        // Read again after the runs before freed it: the file must still hold the jobs that were checked.
        let last_submit = w.jobs.iter().map(|j| j.submit).fold(0.0, f64::max);
        let longest = w.jobs.iter().map(|j| j.runtime).fold(0.0, f64::max);
        if (last_submit, longest) != (self.last_submit, self.longest) {
            return Err(format!("{}: the file changed while the study ran", self.path.display()));
        }
        w.jobs.shrink_to_fit();
        let w = Arc::new(w);
        *shared = Arc::downgrade(&w);
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::workload::tests::{generate, ids};

    #[test]
    fn a_trace_read_again_after_it_changed_is_an_error() {
        let path = std::env::temp_dir().join(format!("gridmarket-changed-{}.swf", std::process::id()));
        let record = |runtime: u32| format!("1 0 10 {runtime} 4 -1 -1 4 7200 -1 1 1 1 -1 1 -1 -1 -1\n");
        std::fs::write(&path, record(3600)).unwrap();
        let trace = Trace::check(path.clone(), Format::Swf).unwrap();
        assert_eq!(trace.jobs().unwrap().jobs.len(), 1, "read as checked");
        // Freed (no run holds it), then the file changes before the next run reads it.
        std::fs::write(&path, record(60)).unwrap();
        let changed = trace.jobs();
        std::fs::remove_file(&path).unwrap();
        assert!(changed.unwrap_err().ends_with(": the file changed while the study ran"));
    }

    #[test]
    fn a_gzip_trace_gives_the_jobs_of_the_plain_one() {
        let gz = generate("model = \"swf\"\nfile = \"small.swf.gz\"");
        assert_eq!(gz, generate("model = \"swf\"\nfile = \"small.swf\""));
        assert_eq!(ids(&gz), [1, 2, 4, 5]);
        let gwf = generate("model = \"gwf\"\nfile = \"small.gwf.gz\"");
        assert_eq!(gwf.jobs, generate("model = \"gwf\"\nfile = \"small.gwf\"").jobs);
    }
}
