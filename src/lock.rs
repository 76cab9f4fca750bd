//! Verdict locks: a family's verdicts, and the mean ± 95% CI of every number they judged, kept in the repository
//! (`scenarios/<family>/verdicts.quick.lock` at `--quick` size, `verdicts.full.lock` at the size of the papers) so
//! that a change which moves a result cannot do so silently: `gridmarket reproduce NAME --check-lock` names every
//! claim whose verdict changed, that came or went, or whose numbers moved beyond [`TOLERANCE`]; `--update-lock`
//! rewrites the file, and the change to it shows in review.
//!
//! A lock is text, a line per verdict (tab-separated: file, class, claim, verdict, then each number judged as
//! `mean ± half-width (n)`, `; ` between the steps of an order), under `#` comment lines that say what it is and, for
//! a full lock, the command, commit and date of the run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::runner::{Class, StudyResult, Verdict};
use crate::scenario::Study;
use crate::stats::Summary;

/// How far a locked number may move before `--check-lock` reports it: a fraction of its magnitude. Runs are
/// deterministic, so this only absorbs the last bits a different libm may round otherwise.
pub const TOLERANCE: f64 = 1e-6;

/// The lock file of the family in `dir`: `verdicts.quick.lock` or `verdicts.full.lock`.
pub fn path(dir: &Path, quick: bool) -> PathBuf {
    dir.join(if quick { "verdicts.quick.lock" } else { "verdicts.full.lock" })
}

/// One locked verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The scenario it belongs to (its name).
    pub file: String,
    /// "target", "hypothesis", "conflict" or "check".
    pub class: String,
    /// What is claimed, as the verdict tables word it.
    pub claim: String,
    /// "pass", "FAIL" or "inconclusive".
    pub verdict: String,
    /// (mean, 95% CI half-width, n) of each number judged.
    pub measures: Vec<(f64, f64, usize)>,
}

impl Entry {
    fn of(file: &str, class: Class, v: &Verdict) -> Entry {
        Entry {
            file: file.to_string(),
            class: class.label().to_string(),
            claim: v.target.clone(),
            verdict: v.outcome.label().to_string(),
            measures: v.measures.iter().map(|s: &Summary| (s.mean, s.ci95, s.n)).collect(),
        }
    }

    /// "file: claim" for messages.
    fn name(&self) -> String {
        format!("{}: {} [{}]", self.file, self.claim, self.class)
    }

    fn measures_text(&self) -> String {
        if self.measures.is_empty() {
            return "nothing measured".into();
        }
        let one = |&(mean, ci, n): &(f64, f64, usize)| format!("{mean} ± {ci} ({n})");
        self.measures.iter().map(one).collect::<Vec<_>>().join("; ")
    }
}

/// Every verdict of a family's studies, targets then checks, file by file.
pub fn entries(studies: &[(Study, StudyResult)]) -> Vec<Entry> {
    let mut out = Vec::new();
    for (study, result) in studies {
        out.extend(result.verdicts.iter().map(|v| Entry::of(&study.name, v.class(), v)));
        out.extend(result.checks.iter().map(|v| Entry::of(&study.name, Class::Check, v)));
    }
    out
}

/// Where a full lock's numbers come from: the command, the commit and the date of the run.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// The command line.
    pub command: String,
    /// The commit of the sources (with "-dirty" when they had uncommitted changes), or "unknown".
    pub commit: String,
    /// The UTC date of the run, YYYY-MM-DD.
    pub date: String,
}

impl Provenance {
    /// The provenance of a run made now by `command`, from git when the working directory is a repository.
    pub fn now(command: String) -> Provenance {
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        let commit = match (
            git(&["rev-parse", "--short=12", "HEAD"]),
            git(&["status", "--porcelain", "--untracked-files=no"]),
        ) {
            (Some(c), Some(changes)) if !changes.is_empty() => format!("{c}-dirty"),
            (Some(c), _) => c,
            _ => "unknown".into(),
        };
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Provenance { command, commit, date: civil_date(secs / 86_400) }
    }
}

/// The proleptic Gregorian date of `days` since 1970-01-01, YYYY-MM-DD (Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The lock of `family` with `entries`, at `--quick` size or, with `provenance`, at full size.
pub fn render(family: &str, quick: bool, entries: &[Entry], provenance: Option<&Provenance>) -> String {
    let size = if quick { "--quick size" } else { "full size" };
    let flag = if quick { " --quick" } else { "" };
    let mut out = format!("# gridmarket verdict lock: the family `{family}` at {size}.\n");
    let _ = writeln!(
        out,
        "# `gridmarket reproduce {family}{flag} --check-lock` fails when a verdict changes, a claim comes or goes, or a"
    );
    let _ = writeln!(
        out,
        "# number moves by more than {TOLERANCE:e} of its magnitude; `--update-lock` rewrites this file. A change that moves"
    );
    let _ = writeln!(out, "# a result updates it in the same commit.");
    if let Some(p) = provenance {
        let _ = writeln!(out, "# run: `{}` at commit {}, {}", p.command, p.commit, p.date);
    }
    let _ = writeln!(out, "# file\tclass\tclaim\tverdict\tmean ± 95% CI half-width (n) of each number judged");
    for e in entries {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        let _ =
            writeln!(out, "{}\t{}\t{}\t{}\t{}", clean(&e.file), e.class, clean(&e.claim), e.verdict, e.measures_text());
    }
    out
}

/// The entries of a lock's text; an error names the line.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what}", i + 1);
        let fields: Vec<&str> = line.split('\t').collect();
        let [file, class, claim, verdict, measures] = fields[..] else {
            return Err(bad(&format!("expected 5 tab-separated fields, found {}", fields.len())));
        };
        let measures =
            if measures == "nothing measured" {
                Vec::new()
            } else {
                measures.split("; ").map(parse_measure).collect::<Option<Vec<_>>>().ok_or_else(|| {
                    bad(&format!("expected `mean ± half-width (n)` for each number, found `{measures}`"))
                })?
            };
        out.push(Entry {
            file: file.into(),
            class: class.into(),
            claim: claim.into(),
            verdict: verdict.into(),
            measures,
        });
    }
    Ok(out)
}

/// `mean ± half-width (n)`.
fn parse_measure(text: &str) -> Option<(f64, f64, usize)> {
    let (mean, rest) = text.split_once(" ± ")?;
    let (ci, n) = rest.strip_suffix(')')?.split_once(" (")?;
    Some((mean.parse().ok()?, ci.parse().ok()?, n.parse().ok()?))
}

/// Whether `a` moved to `b` beyond [`TOLERANCE`] (two NaNs are the same undefined number).
fn moved(a: f64, b: f64) -> bool {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => false,
        (false, false) if a == b => false,
        (false, false) => (a - b).abs() > TOLERANCE * a.abs().max(b.abs()),
        _ => true,
    }
}

/// What differs between the `locked` entries and those measured `now`, a line each: a verdict changed, a claim
/// gone or new, a number moved. Claims are matched by file, class and wording, the k-th of a wording with the
/// k-th.
pub fn compare(locked: &[Entry], now: &[Entry]) -> Vec<String> {
    let key = |e: &Entry| (e.file.clone(), e.class.clone(), e.claim.replace(['\t', '\n', '\r'], " "));
    let mut used = vec![false; locked.len()];
    let mut out = Vec::new();
    for e in now {
        let found = locked.iter().enumerate().position(|(i, l)| !used[i] && key(l) == key(e));
        let Some(i) = found else {
            out.push(format!("{}: new, not in the lock ({}, {})", e.name(), e.verdict, e.measures_text()));
            continue;
        };
        used[i] = true;
        let l = &locked[i];
        if l.verdict != e.verdict {
            out.push(format!("{}: verdict {} → {} ({})", e.name(), l.verdict, e.verdict, e.measures_text()));
        } else if l.measures.len() != e.measures.len()
            || l.measures.iter().zip(&e.measures).any(|(a, b)| a.2 != b.2 || moved(a.0, b.0) || moved(a.1, b.1))
        {
            out.push(format!("{}: moved from {} to {}", e.name(), l.measures_text(), e.measures_text()));
        }
    }
    for (l, _) in locked.iter().zip(&used).filter(|(_, used)| !**used) {
        out.push(format!("{}: gone (locked {}, {})", l.name(), l.verdict, l.measures_text()));
    }
    out
}

/// A family's counts in a full lock, for the README's results table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Targets: pass, FAIL, inconclusive.
    pub targets: [usize; 3],
    /// Own hypotheses: pass, FAIL, inconclusive.
    pub hypotheses: [usize; 3],
    /// Documented conflicts.
    pub conflicts: usize,
    /// Sanity checks: pass, FAIL, inconclusive.
    pub checks: [usize; 3],
}

impl Counts {
    /// The counts of `entries`.
    pub fn of(entries: &[Entry]) -> Counts {
        let mut c = Counts::default();
        for e in entries {
            let slot = match e.verdict.as_str() {
                "pass" => 0,
                "FAIL" => 1,
                _ => 2,
            };
            match e.class.as_str() {
                "target" => c.targets[slot] += 1,
                "hypothesis" => c.hypotheses[slot] += 1,
                "conflict" => c.conflicts += 1,
                _ => c.checks[slot] += 1,
            }
        }
        c
    }
}

/// A table cell of verdict counts `[pass, FAIL, inconclusive]`: "p / f / i of n", or "none".
pub fn counts_cell([p, f, i]: [usize; 3]) -> String {
    match p + f + i {
        0 => "none".to_string(),
        n => format!("{p} / {f} / {i} of {n}"),
    }
}

/// The README's table of results, generated from the full locks of `families` (name, lock text): per family its
/// targets, own hypotheses, documented conflicts, sanity checks and the run the lock records; the families without
/// a full lock said so.
pub fn results_table(families: &[(String, Option<String>)]) -> Result<String, String> {
    let mut out = String::from(
        "| family | targets: pass / FAIL / inconclusive | own hypotheses | documented conflicts | sanity checks | run |\n\
         |---|---|---|---|---|---|\n",
    );
    for (family, lock) in families {
        let Some(text) = lock else {
            let _ = writeln!(out, "| `{family}` | no full lock | | | | |");
            continue;
        };
        let c = Counts::of(&parse(text).map_err(|e| format!("{family}: {e}"))?);
        let run = text
            .lines()
            .find_map(|l| l.strip_prefix("# run: "))
            .map_or("not recorded".to_string(), |r| r.replace('|', "\\|"));
        let _ = writeln!(
            out,
            "| `{family}` | {} | {} | {} | {} | {run} |",
            counts_cell(c.targets),
            counts_cell(c.hypotheses),
            c.conflicts,
            counts_cell(c.checks)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(claim: &str, verdict: &str, measures: Vec<(f64, f64, usize)>) -> Entry {
        Entry { file: "f".into(), class: "target".into(), claim: claim.into(), verdict: verdict.into(), measures }
    }

    #[test]
    fn a_lock_reads_back_what_it_wrote() {
        let entries = vec![
            entry("jobs.wait: fcfs > easy", "pass", vec![(92200.123456789, 65858.5, 10), (0.1, f64::NAN, 1)]),
            entry("utilisation = 0.6 ± 0.05", "inconclusive", vec![(0.6000000000000001, f64::INFINITY, 2)]),
            entry("x at y=1", "FAIL", vec![]),
        ];
        let p = Provenance {
            command: "gridmarket reproduce t --update-lock".into(),
            commit: "abc".into(),
            date: "2026-12-06".into(),
        };
        let text = render("t", false, &entries, Some(&p));
        let back = parse(&text).unwrap();
        assert!(compare(&entries, &back).is_empty(), "{:?}", compare(&entries, &back));
        assert_eq!(back[2].measures, []);
        assert!(text.contains("# run: `gridmarket reproduce t --update-lock` at commit abc, 2026-12-06"));
    }

    #[test]
    fn a_changed_verdict_a_moved_number_and_a_claim_come_or_gone_are_named() {
        let locked = vec![
            entry("a", "pass", vec![(1.0, 0.1, 10)]),
            entry("b", "FAIL", vec![(2.0, 0.1, 10)]),
            entry("c", "pass", vec![(3.0, 0.1, 10)]),
            entry("d", "pass", vec![(4.0, 0.1, 10)]),
        ];
        let now = vec![
            entry("a", "pass", vec![(1.0 + 1e-9, 0.1, 10)]),
            entry("b", "inconclusive", vec![(2.0, 0.1, 10)]),
            entry("c", "pass", vec![(3.01, 0.1, 10)]),
            entry("e", "pass", vec![]),
        ];
        let diff = compare(&locked, &now);
        assert_eq!(diff.len(), 4, "{diff:#?}");
        assert!(diff[0].starts_with("f: b [target]: verdict FAIL → inconclusive"));
        assert!(diff[1].starts_with("f: c [target]: moved from 3 ± 0.1 (10) to 3.01 ± 0.1 (10)"));
        assert!(diff[2].starts_with("f: e [target]: new, not in the lock"));
        assert!(diff[3].starts_with("f: d [target]: gone (locked pass"));
        // The number of runs behind a number is locked too.
        assert_eq!(compare(&locked[..1], &[entry("a", "pass", vec![(1.0, 0.1, 9)])]).len(), 1);
    }

    #[test]
    fn claims_worded_alike_pair_in_order() {
        let locked = vec![entry("a", "pass", vec![(1.0, 0.1, 2)]), entry("a", "FAIL", vec![(2.0, 0.1, 2)])];
        assert!(compare(&locked, &locked).is_empty());
        assert_eq!(compare(&locked, &locked[..1]).len(), 1);
    }

    #[test]
    fn a_bad_line_is_named() {
        assert_eq!(parse("# x\nf\ttarget\tc\tpass\n").unwrap_err(), "line 2: expected 5 tab-separated fields, found 4");
        assert!(
            parse("f\ttarget\tc\tpass\t1 ± x (2)\n").unwrap_err().starts_with("line 1: expected `mean ± half-width")
        );
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_428), "2025-12-06");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }

    #[test]
    fn the_results_table_counts_each_class() {
        let entries = vec![
            Entry { class: "target".into(), ..entry("a", "pass", vec![]) },
            Entry { class: "target".into(), ..entry("b", "FAIL", vec![]) },
            Entry { class: "hypothesis".into(), ..entry("c", "inconclusive", vec![]) },
            Entry { class: "conflict".into(), ..entry("d", "pass", vec![]) },
            Entry { class: "check".into(), ..entry("e", "pass", vec![]) },
        ];
        let p = Provenance { command: "c".into(), commit: "abc".into(), date: "2026-12-06".into() };
        let table =
            results_table(&[("x".into(), Some(render("x", false, &entries, Some(&p)))), ("y".into(), None)]).unwrap();
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            rows[0],
            "| `x` | 1 / 1 / 0 of 2 | 0 / 0 / 1 of 1 | 1 | 1 / 0 / 0 of 1 | `c` at commit abc, 2026-12-06 |"
        );
        assert_eq!(rows[1], "| `y` | no full lock | | | | |");
    }
}
