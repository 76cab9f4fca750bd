//! Grid Workloads Archive format (GWF): streaming reader.
//!
//! Fields 1–11 are the SWF fields; fields 12–29 are grid-specific (users, groups and
//! sites as strings, job structure, network, disk, platform, VO and project). Lines
//! starting with `#` or `;` are comments, read as `Key: value` header entries.
//!
//! OurSim's reader expects one extra numeric column between LastRunSiteID and
//! JobStructure. Each line is classified by where the JobStructure keyword (UNITARY or
//! BoT) sits, and by its token count (29 or 30) when the structure is unknown (−1).
//!
//! String identifiers (UserID, GroupID, OrigSiteID, LastRunSiteID) are interned in order of
//! first appearance; [`Workload::labels`] maps the numbers back to the strings. Fields
//! 21–29 are not used by the simulator and are not kept.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use super::parse::{Fields, Records};
use super::{Skipped, Workload, WorkloadError, WorkloadJob};

/// Field names, from the GWF definition.
pub const FIELDS: [&str; 29] = [
    "JobID",
    "SubmitTime",
    "WaitTime",
    "RunTime",
    "NProcs",
    "AverageCPUTimeUsed",
    "UsedMemory",
    "ReqNProcs",
    "ReqTime",
    "ReqMemory",
    "Status",
    "UserID",
    "GroupID",
    "ExecutableID",
    "QueueID",
    "PartitionID",
    "OrigSiteID",
    "LastRunSiteID",
    "JobStructure",
    "JobStructureParams",
    "UsedNetwork",
    "UsedLocalDiskSpace",
    "UsedResources",
    "ReqPlatform",
    "ReqNetwork",
    "ReqLocalDiskSpace",
    "ReqResources",
    "VOID",
    "ProjectID",
];

/// Field names of OurSim's variant: [`FIELDS`] with an extra column after LastRunSiteID.
const OURSIM_FIELDS: [&str; 30] = {
    let mut names = [""; 30];
    let mut i = 0;
    while i < 30 {
        names[i] = match i {
            ..18 => FIELDS[i],
            18 => "extra numeric column (OurSim)",
            _ => FIELDS[i - 1],
        };
        i += 1;
    }
    names
};

/// Label kinds in [`Workload::labels`].
pub const USER_LABELS: &str = "UserID";
/// Label kind of groups.
pub const GROUP_LABELS: &str = "GroupID";
/// Label kind of sites (OrigSiteID and LastRunSiteID share one numbering).
pub const SITE_LABELS: &str = "SiteID";

/// Interns strings as numbers in order of first appearance; "-1" stays unknown.
#[derive(Default)]
struct Interner {
    ids: BTreeMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> Option<u32> {
        if s == "-1" {
            return None;
        }
        if let Some(&id) = self.ids.get(s) {
            return Some(id);
        }
        let id = u32::try_from(self.names.len()).ok()?;
        self.ids.insert(s.to_string(), id);
        self.names.push(s.to_string());
        Some(id)
    }
}

/// Streaming GWF reader: an iterator over the jobs of any `BufRead`.
///
/// After an I/O error the iterator ends; after a parse error it continues.
pub struct GwfReader<R> {
    records: Records<R>,
    ids: Identifiers,
}

/// The interned string identifiers of a GWF trace.
#[derive(Default)]
struct Identifiers {
    users: Interner,
    groups: Interner,
    sites: Interner,
}

impl<R: BufRead> GwfReader<R> {
    /// Reads from `reader`; `name` (usually the path) prefixes error messages.
    pub fn new(reader: R, name: impl Into<String>) -> Self {
        GwfReader { records: Records::new(reader, name.into(), &['#', ';']), ids: Identifiers::default() }
    }

    /// Header entries read so far.
    pub fn header(&self) -> &[(String, String)] {
        &self.records.header
    }

    /// Records skipped so far because they cannot be simulated.
    pub fn skipped(&self) -> Skipped {
        self.records.skipped
    }

    /// The strings behind interned identifiers, by kind (see [`Workload::labels`]).
    pub fn labels(&self) -> BTreeMap<String, Vec<String>> {
        let ids = &self.ids;
        [(USER_LABELS, &ids.users), (GROUP_LABELS, &ids.groups), (SITE_LABELS, &ids.sites)]
            .into_iter()
            .map(|(k, i)| (k.to_string(), i.names.clone()))
            .collect()
    }
}

impl Identifiers {
    fn parse_line(&mut self, file: &str, line: u64, text: &str) -> Result<Option<WorkloadJob>, WorkloadError> {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        if tokens.len() < FIELDS.len() {
            let found = tokens.len();
            return Err(WorkloadError::FieldCount { file: file.to_string(), line, expected: "29 or 30", found });
        }
        let is_structure = |t: &str| t.eq_ignore_ascii_case("UNITARY") || t.eq_ignore_ascii_case("BoT");
        let oursim =
            !is_structure(tokens[18]) && ((tokens.len() >= 30 && is_structure(tokens[19])) || tokens.len() == 30);
        let f = Fields { file, line, tokens, names: if oursim { &OURSIM_FIELDS } else { &FIELDS } };
        let Some(mut job) = f.core()? else {
            return Ok(None);
        };
        job.user = self.users.intern(f.text(11));
        job.group = self.groups.intern(f.text(12));
        job.executable = f.small_integer(13)?;
        job.queue = f.small_integer(14)?;
        job.partition = f.small_integer(15)?;
        job.orig_site = self.sites.intern(f.text(16));
        job.run_site = self.sites.intern(f.text(17));
        let s = if oursim {
            f.number(18)?;
            19
        } else {
            18
        };
        let structure = f.text(s);
        if structure.eq_ignore_ascii_case("BoT") {
            job.bot = f.integer(s + 1)?;
        } else if !(structure.eq_ignore_ascii_case("UNITARY") || structure == "-1") {
            return Err(f.error(s, "UNITARY, BoT or -1"));
        }
        Ok(Some(job))
    }
}

impl<R: BufRead> Iterator for GwfReader<R> {
    type Item = Result<WorkloadJob, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let ids = &mut self.ids;
        self.records.next_job(|file, line, text| ids.parse_line(file, line, text))
    }
}

/// Reads a whole GWF workload; fails on the first malformed line.
pub fn read_gwf<R: BufRead>(reader: R, name: &str) -> Result<Workload, WorkloadError> {
    let mut r = GwfReader::new(reader, name);
    let jobs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Workload { labels: r.labels(), header: r.records.header, jobs, skipped: r.records.skipped })
}

/// Reads a GWF file, gzip-compressed or not.
pub fn read_gwf_file(path: impl AsRef<Path>) -> Result<Workload, WorkloadError> {
    let path = path.as_ref();
    read_gwf(super::open(path)?, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::super::JobStatus;
    use super::*;

    const STANDARD: &str = "\
# GWA trace excerpt (hand-written)
# Version: 1.0
1 1041867035 12 300 2 -1 -1 2 900 -1 1 U12 G3 -1 1 -1 fs0 fs0 UNITARY -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
2 1041867100 0 60 1 -1 -1 1 -1 -1 1 U7 G3 -1 1 -1 fs1 fs2 BoT 42 -1 -1 -1 -1 -1 -1 -1 -1 -1
3 1041867100 0 65 1 -1 -1 1 -1 -1 0 U7 G3 -1 1 -1 fs1 fs2 BoT 42 -1 -1 -1 -1 -1 -1 -1 -1 -1
4 1041867200 -1 -1 -1 -1 -1 4 -1 -1 5 U12 G3 -1 1 -1 fs0 -1 UNITARY -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
";

    const OURSIM: &str = "\
; OurSim variant: one numeric column after LastRunSiteID
1 0 12 300 2 -1 -1 2 900 -1 1 U12 G3 -1 1 -1 fs0 fs0 7 UNITARY -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
2 65 0 60 1 -1 -1 1 -1 -1 1 U7 G3 -1 1 -1 fs1 fs2 3 BoT 42 -1 -1 -1 -1 -1 -1 -1 -1 -1
3 70 0 60 1 -1 -1 1 -1 -1 1 U7 G3 -1 1 -1 fs1 fs2 3 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
";

    #[test]
    fn standard_variant() {
        let w = read_gwf(STANDARD.as_bytes(), "das2.gwf").unwrap();
        assert_eq!(w.header_value("Version"), Some("1.0"));
        assert_eq!(w.jobs.len(), 3); // job 4 never ran
        let (a, b, c) = (&w.jobs[0], &w.jobs[1], &w.jobs[2]);
        assert_eq!((a.id, a.runtime, a.pes, a.bot), (1, 300.0, 2, None));
        assert_eq!(a.requested_time, Some(900.0));
        assert_eq!((b.bot, c.bot), (Some(42), Some(42)));
        assert_eq!(c.status, Some(JobStatus::Failed));
        // Interning in order of first appearance; sites share one numbering.
        assert_eq!((a.user, b.user), (Some(0), Some(1)));
        assert_eq!((b.orig_site, b.run_site), (Some(1), Some(2)));
        assert_eq!(w.labels[USER_LABELS], ["U12", "U7"]);
        assert_eq!(w.labels[SITE_LABELS], ["fs0", "fs1", "fs2"]);
        assert_eq!(w.labels[GROUP_LABELS], ["G3"]);
    }

    #[test]
    fn a_gzip_trace_gives_the_same_jobs_as_the_plain_one() {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let plain = read_gwf_file(format!("{fixtures}/small.gwf")).unwrap();
        let gz = read_gwf_file(format!("{fixtures}/small.gwf.gz")).unwrap();
        assert_eq!(gz, plain);
        assert_eq!(plain.jobs, read_gwf(STANDARD.as_bytes(), "s").unwrap().jobs);
    }

    #[test]
    fn oursim_variant() {
        let w = read_gwf(OURSIM.as_bytes(), "oursim.gwf").unwrap();
        assert_eq!(w.jobs.len(), 3);
        assert_eq!(w.jobs[0].bot, None);
        assert_eq!(w.jobs[1].bot, Some(42));
        // Structure unknown (-1): classified by the 30-token count.
        assert_eq!(w.jobs[2].bot, None);
        assert_eq!(w.jobs[2].run_site, Some(2));
        // Both variants read the same core fields.
        let std = read_gwf(STANDARD.as_bytes(), "s").unwrap();
        assert_eq!(w.jobs[1].runtime, std.jobs[1].runtime);
        assert_eq!(w.jobs[1].user, std.jobs[1].user);
    }

    #[test]
    fn errors_name_line_and_field() {
        let short = "1 0 0 10 1 -1 -1 1 -1 -1 1 U1 G1\n";
        let err = read_gwf(short.as_bytes(), "g").unwrap_err().to_string();
        assert_eq!(err, "g:1: expected 29 or 30 fields, found 13");

        let bad_structure = STANDARD.replacen("UNITARY", "SERIAL", 1);
        let err = read_gwf(bad_structure.as_bytes(), "g").unwrap_err();
        assert!(matches!(err, WorkloadError::Field { line: 3, column: 19, field: "JobStructure", .. }), "{err}");

        let bad_extra = OURSIM.replacen(" 7 UNITARY", " x UNITARY", 1);
        let err = read_gwf(bad_extra.as_bytes(), "g").unwrap_err().to_string();
        assert!(err.contains("extra numeric column (OurSim)"), "{err}");

        let bad_bot = STANDARD.replacen("BoT 42", "BoT x42", 1);
        let err = read_gwf(bad_bot.as_bytes(), "g").unwrap_err().to_string();
        assert!(err.contains("g:4") && err.contains("JobStructureParams"), "{err}");
    }
}
