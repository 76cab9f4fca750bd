//! Job lists as CSV, for hand-made cases: one job per row.
//!
//! The first line that is not a comment (`#`) or blank names the columns, in any order:
//!
//! | column | job attribute | unit |
//! |---|---|---|
//! | `submit` (required) | submit time | s |
//! | `cpus` (required) | processing elements | |
//! | `runtime` (required) | runtime on a reference PE | s |
//! | `estimate` | runtime estimate, the SWF's requested time (a scheduler sees the larger of it and the runtime) | s |
//! | `deadline` | absolute deadline, at or after the submit time | s |
//! | `budget` | budget | G$ |
//!
//! An empty cell of an optional column leaves that attribute unset for its job. Jobs are numbered 1, 2, … in row
//! order, the `source_id` of `jobs.csv`. The job model also has a valuation and an urgency class, but no simulated
//! agent reads either, so `valuation` and `urgency` columns are refused with what to give instead rather than
//! silently dropped.

use std::io::BufRead;
use std::path::Path;

use agents::registry::limits::MAX_TIME;

use super::parse::{Fields, Records};
use super::{Workload, WorkloadError, WorkloadJob};

/// A column of a job list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Submit,
    Cpus,
    Runtime,
    Estimate,
    Deadline,
    Budget,
}

impl Column {
    /// Every column, the required ones first.
    const ALL: [Column; 6] =
        [Column::Submit, Column::Cpus, Column::Runtime, Column::Estimate, Column::Deadline, Column::Budget];

    /// Its name in the header row.
    fn name(self) -> &'static str {
        match self {
            Column::Submit => "submit",
            Column::Cpus => "cpus",
            Column::Runtime => "runtime",
            Column::Estimate => "estimate",
            Column::Deadline => "deadline",
            Column::Budget => "budget",
        }
    }

    fn required(self) -> bool {
        matches!(self, Column::Submit | Column::Cpus | Column::Runtime)
    }
}

/// The names the header row may hold, as an error message lists them.
const EXPECTED: &str = "submit, cpus and runtime (required), estimate, deadline and budget (optional)";

/// Columns of the job model that no simulated agent reads, with what to give instead.
const UNREAD: [(&str, &str); 2] = [
    (
        "valuation",
        "no simulated agent reads a job's valuation (brokers bid from its budget, or from their strategy's \
         `valuation`): give a `budget` column instead",
    ),
    (
        "urgency",
        "no simulated agent reads a job's urgency class: give the deadline it stands for (submit + ratio × runtime) \
         in a `deadline` column",
    ),
];

/// What a time cell holds: [`MAX_TIME`] is 1e12 s (checked by a test below, as `expected` is a static string).
const SECONDS: &str = "a number of seconds from 0 to 1e12";

/// Reads a job list; fails on the first malformed line.
pub fn read_csv<R: BufRead>(reader: R, name: &str) -> Result<Workload, WorkloadError> {
    let mut records = Records::new(reader, name.to_string(), &['#']);
    let columns = match records.next_record() {
        Some(header) => columns(name, records.line, &header?)?,
        None => {
            let message = format!("no header row: expected the columns {EXPECTED}");
            return Err(WorkloadError::Line { file: name.to_string(), line: records.line.max(1), message });
        }
    };
    let names: Vec<&'static str> = columns.iter().map(|c| c.name()).collect();
    let mut jobs = Vec::new();
    let mut parse = |file: &str, line, text: &str| {
        let job = row(file, line, text, &columns, &names)?;
        Ok((!super::parse::asks_for_nothing(job.runtime, job.requested_time)).then_some(job))
    };
    while let Some(job) = records.next_job(&mut parse) {
        jobs.push(WorkloadJob { id: jobs.len() as u64 + 1, ..job? });
    }
    Ok(Workload { skipped: records.skipped, ..Workload::new(jobs) })
}

/// Reads a job list file, gzip-compressed or not.
pub fn read_csv_file(path: impl AsRef<Path>) -> Result<Workload, WorkloadError> {
    let path = path.as_ref();
    read_csv(super::open(path)?, &path.display().to_string())
}

/// The columns the header row names, in its order.
fn columns(file: &str, line: u64, text: &str) -> Result<Vec<Column>, WorkloadError> {
    let error = |message: String| WorkloadError::Line { file: file.to_string(), line, message };
    let mut out: Vec<Column> = Vec::new();
    for cell in text.split(',').map(str::trim) {
        if let Some((_, why)) = UNREAD.iter().find(|(name, _)| cell.eq_ignore_ascii_case(name)) {
            return Err(error(format!("column `{cell}`: {why}")));
        }
        let Some(&column) = Column::ALL.iter().find(|c| cell.eq_ignore_ascii_case(c.name())) else {
            return Err(error(format!("unknown column `{cell}`: expected {EXPECTED}")));
        };
        if out.contains(&column) {
            return Err(error(format!("column `{}` named twice", column.name())));
        }
        out.push(column);
    }
    if let Some(missing) = Column::ALL.iter().find(|c| c.required() && !out.contains(c)) {
        return Err(error(format!("no `{}` column: expected {EXPECTED}", missing.name())));
    }
    Ok(out)
}

/// One job from a data row.
fn row(
    file: &str,
    line: u64,
    text: &str,
    columns: &[Column],
    names: &[&'static str],
) -> Result<WorkloadJob, WorkloadError> {
    let tokens: Vec<&str> = text.split(',').map(str::trim).collect();
    if tokens.len() != columns.len() {
        let message = format!(
            "expected {} comma-separated values, one per column of the header, found {}",
            columns.len(),
            tokens.len()
        );
        return Err(WorkloadError::Line { file: file.to_string(), line, message });
    }
    let f = Fields { file, line, tokens, names };
    let seconds = |i: usize| match f.number(i) {
        Ok(v) if (0.0..=MAX_TIME).contains(&v) => Ok(v),
        _ => Err(f.error(i, SECONDS)),
    };
    let mut job = WorkloadJob::default();
    let mut deadline_at = None;
    for (i, &column) in columns.iter().enumerate() {
        if f.text(i).is_empty() && !column.required() {
            continue;
        }
        match column {
            Column::Submit => job.submit = seconds(i)?,
            Column::Cpus => {
                job.pes = match f.number(i) {
                    Ok(v) if v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX) => v as u32,
                    _ => return Err(f.error(i, "a positive integer below 2^32")),
                }
            }
            Column::Runtime => job.runtime = seconds(i)?,
            Column::Estimate => job.requested_time = Some(seconds(i)?),
            Column::Deadline => {
                job.deadline = Some(seconds(i)?);
                deadline_at = Some(i);
            }
            Column::Budget => {
                job.budget = match f.number(i) {
                    Ok(v) if v >= 0.0 => Some(v),
                    _ => return Err(f.error(i, "a non-negative amount of G$")),
                }
            }
        }
    }
    if let (Some(i), Some(d)) = (deadline_at, job.deadline)
        && d < job.submit
    {
        return Err(f.error(i, "a deadline at or after the job's submit time"));
    }
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Workload, WorkloadError> {
        read_csv(text.as_bytes(), "jobs.csv")
    }

    #[test]
    fn seconds_name_the_cap() {
        assert!(SECONDS.contains(&agents::registry::limits::short(MAX_TIME)));
    }

    #[test]
    fn columns_in_any_order_with_optional_cells() {
        let w = read(
            "# hand-made\n\
             runtime, cpus ,submit,deadline,estimate,budget\n\
             100,2,0,300,,\n\
             \n\
             50,1,10.5,,80,12.5\n",
        )
        .unwrap();
        assert_eq!(w.jobs.len(), 2);
        let a = &w.jobs[0];
        assert_eq!((a.id, a.submit, a.runtime, a.pes), (1, 0.0, 100.0, 2));
        assert_eq!((a.deadline, a.requested_time, a.budget), (Some(300.0), None, None));
        let b = &w.jobs[1];
        assert_eq!((b.id, b.submit, b.runtime, b.pes), (2, 10.5, 50.0, 1));
        assert_eq!((b.deadline, b.requested_time, b.budget), (None, Some(80.0), Some(12.5)));
        // Only the required columns.
        let w = read("submit,cpus,runtime\n0,1,5\n").unwrap();
        assert_eq!(w.jobs, [WorkloadJob::new(1, 0.0, 5.0, 1)]);
    }

    #[test]
    fn bad_headers_name_the_line_and_the_expected_columns() {
        let cases = [
            ("# c\nsubmit,cpu,runtime\n", "jobs.csv:2: unknown column `cpu`: expected submit, cpus and runtime"),
            ("submit,cpus\n", "jobs.csv:1: no `runtime` column: expected"),
            ("submit,cpus,runtime,cpus\n", "jobs.csv:1: column `cpus` named twice"),
            ("submit,cpus,runtime,valuation\n", "jobs.csv:1: column `valuation`: no simulated agent reads"),
            ("submit,cpus,runtime,Urgency\n", "jobs.csv:1: column `Urgency`: no simulated agent reads"),
            ("# only a comment\n", "jobs.csv:1: no header row: expected the columns submit"),
        ];
        for (text, needle) in cases {
            let err = read(text).unwrap_err().to_string();
            assert!(err.starts_with(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn bad_cells_name_the_line_and_the_column() {
        let cases = [
            ("0,1\n", "jobs.csv:2: expected 3 comma-separated values, one per column of the header, found 2"),
            ("0,0,5\n", "jobs.csv:2: field 2 (cpus): expected a positive integer below 2^32, found \"0\""),
            ("0,1.5,5\n", "field 2 (cpus)"),
            ("-1,1,5\n", "field 1 (submit): expected a number of seconds from 0 to 1e12, found \"-1\""),
            (",1,5\n", "field 1 (submit)"),
            ("0,1,x\n", "field 3 (runtime)"),
            ("0,1,1e13\n", "field 3 (runtime)"),
        ];
        for (text, needle) in cases {
            let err = read(&format!("submit,cpus,runtime\n{text}")).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        let err = read("submit,cpus,runtime,deadline\n10,1,5,9\n").unwrap_err().to_string();
        assert!(err.contains("field 4 (deadline): expected a deadline at or after the job's submit time"), "{err}");
        let err = read("submit,cpus,runtime,budget\n10,1,5,-2\n").unwrap_err().to_string();
        assert!(err.contains("field 4 (budget): expected a non-negative amount of G$"), "{err}");
    }
}
