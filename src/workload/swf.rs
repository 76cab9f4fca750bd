//! Standard Workload Format (Parallel Workloads Archive, SWF v2.2): streaming reader and
//! writer.
//!
//! A job line has 18 whitespace-separated fields; `;` starts a header comment, whose
//! `Key: value` pairs (MaxJobs, MaxProcs, MaxNodes, MaxRuntime, TimeZoneString, …) are kept
//! in order; −1 means unknown. Extra trailing columns are ignored. Records that cannot be
//! simulated (unknown submit time or runtime, no processor count) are skipped and counted.
//!
//! The writer gives times in whole seconds, as the format's fields are integers: writing then reading a workload
//! whose times are whole seconds gives it back unchanged, for the fields SWF can hold (the grid and QoS fields of
//! [`WorkloadJob`] are not part of the format).

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use super::parse::{Fields, Records};
use super::{Skipped, Workload, WorkloadError, WorkloadJob};

/// Field names, from the SWF definition.
pub const FIELDS: [&str; 18] = [
    "Job Number",
    "Submit Time",
    "Wait Time",
    "Run Time",
    "Number of Allocated Processors",
    "Average CPU Time Used",
    "Used Memory",
    "Requested Number of Processors",
    "Requested Time",
    "Requested Memory",
    "Status",
    "User ID",
    "Group ID",
    "Executable Number",
    "Queue Number",
    "Partition Number",
    "Preceding Job Number",
    "Think Time from Preceding Job",
];

/// Streaming SWF reader: an iterator over the jobs of any `BufRead`.
///
/// Header lines are collected as they are met ([`SwfReader::header`]). After an I/O error
/// the iterator ends; after a parse error it continues with the next line.
pub struct SwfReader<R> {
    records: Records<R>,
}

impl<R: BufRead> SwfReader<R> {
    /// Reads from `reader`; `name` (usually the path) prefixes error messages.
    pub fn new(reader: R, name: impl Into<String>) -> Self {
        SwfReader { records: Records::new(reader, name.into(), &[';']) }
    }

    /// Header entries read so far.
    pub fn header(&self) -> &[(String, String)] {
        &self.records.header
    }

    /// Records skipped so far because they cannot be simulated.
    pub fn skipped(&self) -> Skipped {
        self.records.skipped
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<WorkloadJob, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.records.next_job(parse_line)
    }
}

fn parse_line(file: &str, line: u64, text: &str) -> Result<Option<WorkloadJob>, WorkloadError> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.len() != FIELDS.len() {
        return Err(WorkloadError::FieldCount { file: file.to_string(), line, expected: "18", found: tokens.len() });
    }
    let f = Fields { file, line, tokens, names: &FIELDS };
    let Some(mut job) = f.core()? else {
        return Ok(None);
    };
    job.user = f.small_integer(11)?;
    job.group = f.small_integer(12)?;
    job.executable = f.small_integer(13)?;
    job.queue = f.small_integer(14)?;
    job.partition = f.small_integer(15)?;
    job.preceding_job = f.integer(16)?;
    job.think_time = f.signed_time(17)?;
    Ok(Some(job))
}

/// Reads a whole SWF workload; fails on the first malformed line.
pub fn read_swf<R: BufRead>(reader: R, name: &str) -> Result<Workload, WorkloadError> {
    let mut r = SwfReader::new(reader, name);
    let jobs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Workload { header: r.records.header, jobs, skipped: r.records.skipped, ..Workload::default() })
}

/// Reads an SWF file, gzip-compressed or not.
pub fn read_swf_file(path: impl AsRef<Path>) -> Result<Workload, WorkloadError> {
    let path = path.as_ref();
    read_swf(super::open(path)?, &path.display().to_string())
}

/// The SWF version the writer follows.
pub const VERSION: &str = "2.2";

/// How [`write_swf`] writes times, for the header of what it writes.
pub const TIMES_NOTE: &str = "times are whole seconds, each rounded to the nearest (halves away from zero)";

/// A header as SWF v2.2 asks: `Version`, `MaxJobs` and `MaxRecords` (one record per job of `w`), then `entries`
/// (Computer, Installation, Conversion, MaxProcs, Note…; any of the three above among them are left out), then a note
/// on how times are written.
pub fn header(w: &Workload, entries: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let jobs = w.jobs.len().to_string();
    let mut out =
        vec![("Version".into(), VERSION.into()), ("MaxJobs".into(), jobs.clone()), ("MaxRecords".into(), jobs)];
    let computed = |k: &str| ["Version", "MaxJobs", "MaxRecords"].iter().any(|c| c.eq_ignore_ascii_case(k));
    out.extend(entries.into_iter().filter(|(k, _)| !computed(k)));
    out.push(("Note".into(), TIMES_NOTE.into()));
    out
}

/// Writes `w` as SWF: its header as `; Key: value` lines, then one 18-field line per job.
///
/// Times (submit, wait, run, CPU, requested and think times) are rounded to whole seconds, halves away from zero, as
/// the format's fields are integers ([`TIMES_NOTE`]); other numbers use Rust's shortest round-trip formatting.
pub fn write_swf<W: Write>(w: &Workload, out: W) -> Result<(), WorkloadError> {
    let io = |cause| WorkloadError::Io { context: "writing SWF".to_string(), cause };
    let mut out = BufWriter::new(out);
    for (key, value) in &w.header {
        if key.is_empty() {
            writeln!(out, "; {value}").map_err(io)?;
        } else {
            writeln!(out, "; {key}: {value}").map_err(io)?;
        }
    }
    for j in &w.jobs {
        let fields: [String; 18] = [
            j.id.to_string(),
            whole(j.submit).to_string(),
            opt(j.wait.map(whole)),
            whole(j.runtime).to_string(),
            j.pes.to_string(),
            opt(j.avg_cpu_time.map(whole)),
            opt(j.used_memory),
            opt(j.requested_pes),
            opt(j.requested_time.map(whole)),
            opt(j.requested_memory),
            opt(j.status.map(|s| s.code())),
            opt(j.user),
            opt(j.group),
            opt(j.executable),
            opt(j.queue),
            opt(j.partition),
            opt(j.preceding_job),
            opt(j.think_time.map(whole)),
        ];
        writeln!(out, "{}", fields.join(" ")).map_err(io)?;
    }
    out.flush().map_err(io)
}

/// A time in whole seconds, halves away from zero (−0 as 0).
pub fn whole(t: f64) -> f64 {
    t.round() + 0.0
}

/// SWF text of an optional field: −1 when unknown.
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-1".to_string(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::lublin::LublinParams;
    use super::super::{JobStatus, Limit};
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;
    use std::fs::File;
    use std::io::BufReader;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

    fn round_trip(w: &Workload) -> Workload {
        let mut buf = Vec::new();
        write_swf(w, &mut buf).unwrap();
        read_swf(buf.as_slice(), "<memory>").unwrap()
    }

    #[test]
    fn round_trip_of_generated_workload() {
        // The Lublin model draws whole seconds, as `m_lublin99.c` does.
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let w = LublinParams::typed().generate(Limit::Jobs(500), &mut rng).unwrap();
        assert_eq!(round_trip(&w), w);
    }

    #[test]
    fn times_are_written_in_whole_seconds_rounded_to_the_nearest() {
        let job = WorkloadJob {
            wait: Some(-0.4),
            requested_time: Some(7.5),
            think_time: Some(2.49),
            avg_cpu_time: Some(0.5),
            ..WorkloadJob::new(1, 10.5, 2.5, 1)
        };
        let mut buf = Vec::new();
        write_swf(&Workload::new(vec![job]), &mut buf).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "1 11 0 3 1 1 -1 -1 8 -1 -1 -1 -1 -1 -1 -1 -1 2\n");
    }

    #[test]
    fn the_header_says_version_counts_and_rounding() {
        let mut w = Workload::new(vec![WorkloadJob::new(1, 0.0, 1.0, 1), WorkloadJob::new(2, 1.0, 1.0, 1)]);
        w.header = header(&w, [("MaxJobs".into(), "7".into()), ("Computer".into(), "none".into())]);
        let mut buf = Vec::new();
        write_swf(&w, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.starts_with(
                "; Version: 2.2\n; MaxJobs: 2\n; MaxRecords: 2\n; Computer: none\n\
                 ; Note: times are whole seconds, each rounded to the nearest (halves away from zero)\n1 0 "
            ),
            "{text}"
        );
    }

    #[test]
    fn round_trip_of_every_field() {
        let job = WorkloadJob {
            wait: Some(-30.0), // negative waits (reservations) are not "unknown"
            avg_cpu_time: Some(12.0),
            used_memory: Some(1024.5),
            requested_pes: Some(8),
            requested_time: Some(3600.0),
            requested_memory: Some(2048.0),
            status: Some(JobStatus::Cancelled),
            user: Some(7),
            group: Some(2),
            executable: Some(11),
            queue: Some(0),
            partition: Some(1),
            preceding_job: Some(3),
            think_time: Some(5.0),
            ..WorkloadJob::new(4, 3.0, 1.0, 8)
        };
        // A runtime of 0 is kept when the job asked for time (it was killed at once, not cancelled before it ran).
        let instant = WorkloadJob { requested_time: Some(60.0), ..WorkloadJob::new(5, 1e9, 0.0, 1) };
        let mut w = Workload::new(vec![job, instant]);
        w.set_header("Version", "2.2");
        w.set_header("TimeZoneString", "US/Pacific");
        w.header.push((String::new(), "free text".into()));
        w.header.push(("Note".into(), "first".into()));
        w.header.push(("Note".into(), "second".into()));
        assert_eq!(round_trip(&w), w);
    }

    #[test]
    fn small_fixture() {
        let w = read_swf_file(format!("{FIXTURES}/small.swf")).unwrap();
        assert_eq!(w.header_number("MaxJobs"), Some(5.0));
        assert_eq!(w.header_number("MaxProcs"), Some(128.0));
        assert_eq!(w.header_number("MaxNodes"), Some(128.0));
        assert_eq!(w.header_number("MaxRuntime"), Some(172_800.0));
        assert_eq!(w.header_value("TimeZoneString"), Some("US/Pacific"));
        // Five records: one cancelled before running (runtime and processors unknown) is
        // skipped; one has only the requested processor count.
        assert_eq!(w.jobs.len(), 4);
        let j = &w.jobs[0];
        assert_eq!((j.id, j.submit, j.runtime, j.pes), (1, 0.0, 3600.0, 32));
        assert_eq!(j.wait, Some(10.0));
        assert_eq!(j.avg_cpu_time, None);
        assert_eq!(j.requested_time, Some(7200.0));
        assert_eq!(j.status, Some(JobStatus::Completed));
        assert_eq!(j.queue, Some(1));
        let fallback = w.jobs.iter().find(|j| j.id == 4).unwrap();
        assert_eq!(fallback.pes, 16);
        assert_eq!(fallback.requested_pes, Some(16));
        // Extra trailing columns are ignored.
        assert_eq!(w.jobs[3].think_time, None);

        let file = File::open(format!("{FIXTURES}/small.swf")).unwrap();
        let mut r = SwfReader::new(BufReader::new(file), "small.swf");
        assert_eq!(r.by_ref().filter(Result::is_ok).count(), 4);
        assert_eq!(r.skipped(), Skipped { count: 1, first_line: Some(14) });
    }

    #[test]
    fn a_gzip_trace_gives_the_same_jobs_as_the_plain_one() {
        let plain = read_swf_file(format!("{FIXTURES}/small.swf")).unwrap();
        let gz = read_swf_file(format!("{FIXTURES}/small.swf.gz")).unwrap();
        assert_eq!(gz, plain);
        assert_eq!((gz.jobs.len(), gz.skipped.count), (4, 1));
    }

    #[test]
    fn a_corrupt_gzip_trace_is_an_error_that_names_it() {
        let path = std::env::temp_dir().join(format!("gridmarket-corrupt-{}.swf.gz", std::process::id()));
        // A gzip header, then no valid deflate stream.
        std::fs::write(&path, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff]).unwrap();
        let err = read_swf_file(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(err.starts_with(&format!("{}:1: ", path.display())), "{err}");
    }

    #[test]
    fn malformed_fixture_names_line_and_field() {
        let err = read_swf_file(format!("{FIXTURES}/malformed.swf")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, WorkloadError::Field { line: 5, column: 4, field: "Run Time", .. }), "{msg}");
        assert!(msg.contains("malformed.swf:5"), "{msg}");
        assert!(msg.contains("Run Time"), "{msg}");
        assert!(msg.contains("\"12x\""), "{msg}");

        // The streaming reader reports the bad line and carries on.
        let file = File::open(format!("{FIXTURES}/malformed.swf")).unwrap();
        let results: Vec<_> = SwfReader::new(BufReader::new(file), "m").collect();
        assert_eq!(results.len(), 4);
        assert_eq!(results.iter().filter(|r| r.is_err()).count(), 2);
    }

    #[test]
    fn bad_lines_give_errors_not_panics() {
        let cases = [
            ("1 0 -1 10", "expected 18 fields, found 4"),
            ("1 0 -1 NaN 1 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "Run Time"),
            ("1 0 -1 10 2.5 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "Allocated"),
            ("1 0 -1 10 2 -1 -1 -1 -1 -1 9 -1 -1 -1 -1 -1 -1 -1", "Status"),
            ("1 0 -1 10 2 -1 -1 -1 -1 -1 1 -7 -1 -1 -1 -1 -1 -1", "User ID"),
            ("1 0 -1 -5 2 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "Run Time"),
            ("-3 0 -1 5 2 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "Job Number"),
            ("1 1e400 -1 5 2 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "Submit Time"),
            ("1 0 -1 5 99999999999 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", "below 2^32"),
        ];
        for (line, needle) in cases {
            let err = read_swf(line.as_bytes(), "x").unwrap_err().to_string();
            assert!(err.contains(needle), "{line}: {err}");
            assert!(err.starts_with("x:1"), "{err}");
        }
        // Invalid UTF-8 is an I/O error with the line number.
        let err = read_swf(&b"; ok\n\xff\xfe\n"[..], "bin").unwrap_err();
        assert!(err.to_string().starts_with("bin:2"), "{err}");
    }
}
