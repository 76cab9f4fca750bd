//! Sharded runs: `run --shard K/N` runs every N-th (point, replication) task of a study, from the K-th, into the
//! usual layout, and records in `shard.json` what `merge` needs; `merge` checks that the shards fit together and
//! writes the study's files from them, byte for byte as one run of the whole study would.
//!
//! A `reproduce --shard` of a family numbers the tasks across its files, so that a family of small studies still
//! spreads over every shard; its folder holds one more `shard.json`, naming the family and its studies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Finished, StudyResult, outputs, run, run_dir, summarise};
use crate::output::write_atomic;
use crate::scenario::{LoadOptions, Plugins, Study};

/// The manifest's file name in a shard's folder.
pub const MANIFEST: &str = "shard.json";
/// `kind` of a study's manifest.
const STUDY_KIND: &str = "gridmarket shard of a study";
/// `kind` of a family's manifest (`reproduce --shard`).
const FAMILY_KIND: &str = "gridmarket shard of a family";
/// Missing runs named in an error before "and N more".
const NAMED: usize = 6;

/// One share of a study's tasks: the K-th of N, counted from 1, as a Slurm array `--array=1-N` numbers its tasks
/// (so `$SLURM_ARRAY_TASK_ID` is K as it stands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K, in 1..=N.
    pub index: u32,
    /// N.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}`: expected K/N with 1 ≤ K ≤ N (shards are counted from 1)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Refuses a study whose replications follow a target precision: how many a point needs depends on the runs of every
/// shard.
pub fn refuse_adaptive(study: &Study) -> Result<(), String> {
    let Some(p) = study.points.iter().find(|p| p.plan.precision.is_some()) else { return Ok(()) };
    let at = if p.label.is_empty() { String::new() } else { format!(" (at {})", p.label) };
    Err(format!(
        "{}: --shard: the scenario sets a target precision{at}, so its replications depend on the results of every \
         shard; set `replications` instead",
        study.path.display()
    ))
}

impl Shard {
    /// Whether the task at `position` in the task list is this shard's. Round robin rather than blocks: a sweep's
    /// points often grow in cost along the list (more load, more providers), and blocks would give the last shard
    /// the dearest ones.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count as usize == (self.index - 1) as usize
    }
}

/// The options of a load that change a study: `merge` loads the scenario again with them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Loaded {
    /// `--quick`.
    pub quick: bool,
    /// `--set`, in order.
    pub set: Vec<(String, String)>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--replications`.
    pub replications: Option<u32>,
}

impl Loaded {
    /// The same options as a [`LoadOptions`], over what `plugins` offers scenarios.
    pub fn options(&self, plugins: &Plugins) -> LoadOptions {
        LoadOptions {
            registry: plugins.registry.clone(),
            workloads: plugins.workloads.clone(),
            quick: self.quick,
            set: self.set.clone(),
            seed: self.seed,
            replications: self.replications,
        }
    }
}

/// A study run as one shard.
#[derive(Clone, Debug)]
pub struct ShardRun {
    /// Which share.
    pub shard: Shard,
    /// Tasks of the family's earlier studies (0 for `run`): the task list runs on across a family.
    pub offset: usize,
    /// How the study was loaded.
    pub load: Loaded,
}

impl ShardRun {
    /// Whether replication `rep` of `point` is this shard's: tasks are listed point by point, replications in
    /// order (the plan's order).
    pub fn takes(&self, study: &Study, point: usize, rep: u32) -> bool {
        // Wrapping: an offset read from a damaged manifest must give an error (the run is not this shard's), not a
        // panic.
        self.shard.takes(self.offset.wrapping_add(position(study, point, rep)))
    }
}

/// Where replication `rep` of `point` stands in the study's task list.
fn position(study: &Study, point: usize, rep: u32) -> usize {
    study.points[..point].iter().map(|p| p.plan.replications as usize).sum::<usize>() + rep as usize
}

/// The study's tasks in all.
pub fn tasks(study: &Study) -> usize {
    study.points.iter().map(|p| p.plan.replications as usize).sum()
}

/// What identifies a sweep point's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct PointId {
    hash: String,
    seed: u64,
    replications: u32,
}

/// A finished run's metrics. Values are JSON numbers, which read back to the same `f64` bits; NaN and the
/// infinities, which JSON lacks, are strings ("NaN", "inf", "-inf").
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RunRecord {
    point: usize,
    replication: u32,
    seed: u64,
    metrics: BTreeMap<String, Value>,
}

/// A run that did not finish.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Unfinished {
    point: usize,
    replication: u32,
    why: String,
}

/// `shard.json` of a study.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct StudyManifest {
    kind: String,
    version: String,
    name: String,
    /// The scenario file as given, and as an absolute path (found from another folder).
    scenario: String,
    scenario_absolute: String,
    load: Loaded,
    shard: u32,
    of: u32,
    offset: usize,
    points: Vec<PointId>,
    runs: Vec<RunRecord>,
    unfinished: Vec<Unfinished>,
}

/// `shard.json` of a family.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct FamilyManifest {
    kind: String,
    version: String,
    family: String,
    studies: Vec<String>,
    shard: u32,
    of: u32,
}

fn point_ids(study: &Study) -> Vec<PointId> {
    study
        .points
        .iter()
        .map(|p| PointId {
            hash: format!("{:016x}", p.hash),
            seed: run::seed_of(&p.plan, 0),
            replications: p.plan.replications,
        })
        .collect()
}

fn exact(x: f64) -> Value {
    if x.is_finite() { Value::from(x) } else { Value::String(x.to_string()) }
}

fn read_exact(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// Writes a shard's `shard.json` into `out`, its run folders already written.
pub fn write_manifest(
    study: &Study,
    shard: &ShardRun,
    runs: &[Finished],
    unfinished: &[(usize, u32, String)],
    out: &Path,
) -> std::io::Result<()> {
    let manifest = StudyManifest {
        kind: STUDY_KIND.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        name: study.name.clone(),
        scenario: study.path.display().to_string(),
        scenario_absolute: std::path::absolute(&study.path)?.display().to_string(),
        load: shard.load.clone(),
        shard: shard.shard.index,
        of: shard.shard.count,
        offset: shard.offset,
        points: point_ids(study),
        runs: runs
            .iter()
            .map(|r| RunRecord {
                point: r.point,
                replication: r.rep,
                seed: r.seed,
                metrics: r.metrics.iter().map(|(k, v)| (k.clone(), exact(*v))).collect(),
            })
            .collect(),
        unfinished: unfinished
            .iter()
            .map(|(point, rep, why)| Unfinished { point: *point, replication: *rep, why: why.clone() })
            .collect(),
    };
    write_json(&out.join(MANIFEST), &manifest)
}

/// Writes a family's `shard.json` into `out`, its studies' folders already written.
pub fn write_family_manifest(family: &str, studies: &[&str], shard: Shard, out: &Path) -> std::io::Result<()> {
    let manifest = FamilyManifest {
        kind: FAMILY_KIND.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        family: family.into(),
        studies: studies.iter().map(|s| s.to_string()).collect(),
        shard: shard.index,
        of: shard.count,
    };
    write_json(&out.join(MANIFEST), &manifest)
}

fn write_json(path: &Path, v: &impl Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes).map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// What `merge` was given: the shards of one study, or of one family.
pub enum Merged {
    /// `run --shard` folders.
    Study(Box<MergedStudy>),
    /// `reproduce --shard` folders: the family's name and its studies, in the family's order.
    Family(String, Vec<MergedStudy>),
}

/// A study put together from its shards, not yet written.
pub struct MergedStudy {
    /// The study, loaded again as the shards loaded it.
    pub study: Study,
    /// Its result, as one run of the whole study would have it.
    pub result: StudyResult,
    /// Each shard's folder and its runs.
    sources: Vec<(PathBuf, Vec<(usize, u32)>)>,
}

/// Reads and checks the shards in `dirs`; nothing is written. An error names the folder and what is wrong.
/// The study is loaded again with what `plugins` offers scenarios (the kinds, policies and workload models the shards
/// ran with).
pub fn merge(dirs: &[PathBuf], plugins: &Plugins) -> anyhow::Result<Merged> {
    if dirs.is_empty() {
        bail!("merge: no shard folder given");
    }
    let mut manifests = Vec::new();
    for dir in dirs {
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(|e| {
            anyhow::anyhow!(
                "{}: not a shard ({} cannot be read: {e}; `run --shard K/N` and `reproduce --shard K/N` write it)",
                dir.display(),
                path.display()
            )
        })?;
        manifests.push((dir.clone(), bytes));
    }
    merge_manifests(&manifests, plugins)
}

/// As [`merge`], given the folders with the bytes of their `shard.json` (a family's studies are read from disk).
pub fn merge_manifests(manifests: &[(PathBuf, Vec<u8>)], plugins: &Plugins) -> anyhow::Result<Merged> {
    let mut families = Vec::new();
    let mut studies = Vec::new();
    for (dir, bytes) in manifests {
        let path = dir.join(MANIFEST);
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| anyhow::anyhow!("{}: not a shard ({} is not JSON: {e})", dir.display(), path.display()))?;
        let not_manifest = |e: serde_json::Error| {
            anyhow::anyhow!("{}: not a shard ({} is not a shard manifest: {e})", dir.display(), path.display())
        };
        match v.get("kind").and_then(Value::as_str) {
            Some(FAMILY_KIND) => families.push((dir.clone(), FamilyManifest::deserialize(&v).map_err(not_manifest)?)),
            Some(STUDY_KIND) => studies.push((dir.clone(), StudyManifest::deserialize(&v).map_err(not_manifest)?)),
            _ => bail!("{}: not a shard ({} has no shard `kind`)", dir.display(), path.display()),
        }
    }
    if !families.is_empty() && !studies.is_empty() {
        let (f, s) = (&families[0].0, &studies[0].0);
        bail!("{}: a shard of a family (reproduce), but {} is a shard of a study (run)", f.display(), s.display());
    }
    if studies.is_empty() {
        if families.is_empty() {
            bail!("merge: no shard folder given");
        }
        return merge_family(&families, plugins);
    }
    Ok(Merged::Study(Box::new(merge_study(studies, plugins)?)))
}

fn merge_family(shards: &[(PathBuf, FamilyManifest)], plugins: &Plugins) -> anyhow::Result<Merged> {
    let (first_dir, first) = &shards[0];
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for (dir, m) in shards {
        same_version(dir, &m.version)?;
        if m.family != first.family || m.studies != first.studies {
            bail!(
                "{}: a shard of family `{}` ({}), but {} is one of family `{}` ({})",
                dir.display(),
                m.family,
                m.studies.join(", "),
                first_dir.display(),
                first.family,
                first.studies.join(", ")
            );
        }
        same_split(dir, m.shard, m.of, first_dir, first.of, &mut seen)?;
    }
    let mut merged = Vec::new();
    for name in &first.studies {
        let mut studies = Vec::new();
        for (dir, _) in shards {
            let sub = dir.join(name);
            let path = sub.join(MANIFEST);
            let bytes = std::fs::read(&path)
                .with_context(|| format!("{}: shard of study `{name}` missing ({})", dir.display(), path.display()))?;
            let m: StudyManifest = serde_json::from_slice(&bytes)
                .map_err(|e| anyhow::anyhow!("{}: not a shard manifest: {e}", path.display()))?;
            studies.push((sub, m));
        }
        merged.push(merge_study(studies, plugins)?);
    }
    Ok(Merged::Family(first.family.clone(), merged))
}

/// Refuses a shard made by another version than this one (so every shard of a merge comes from one version).
fn same_version(dir: &Path, version: &str) -> anyhow::Result<()> {
    let mine = env!("CARGO_PKG_VERSION");
    if version != mine {
        bail!(
            "{}: made by gridmarket {version}, and this is gridmarket {mine}: merge with the version that ran it",
            dir.display()
        );
    }
    Ok(())
}

/// Checks that shard `index`/`of` of `dir` belongs to the split of the first shard and is not given twice.
fn same_split<'a>(
    dir: &'a Path,
    index: u32,
    of: u32,
    first_dir: &Path,
    first_of: u32,
    seen: &mut BTreeMap<u32, &'a Path>,
) -> anyhow::Result<()> {
    if index == 0 || index > of {
        bail!("{}: shard {index}/{of} is not a shard of a split (1 ≤ K ≤ N)", dir.display());
    }
    if of != first_of {
        bail!(
            "{}: shard {index}/{of}, but {} is a shard of {first_of}: the shards of one split must be merged together",
            dir.display(),
            first_dir.display()
        );
    }
    if let Some(other) = seen.insert(index, dir) {
        bail!("{} and {} are both shard {index}/{of}: overlapping shards", other.display(), dir.display());
    }
    Ok(())
}

fn merge_study(shards: Vec<(PathBuf, StudyManifest)>, plugins: &Plugins) -> anyhow::Result<MergedStudy> {
    let (first_dir, first) = &shards[0];
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for (dir, m) in &shards {
        same_version(dir, &m.version)?;
        if (&m.name, &m.scenario_absolute, m.offset) != (&first.name, &first.scenario_absolute, first.offset) {
            bail!(
                "{}: a shard of scenario `{}` ({}), but {} is one of `{}` ({})",
                dir.display(),
                m.name,
                m.scenario_absolute,
                first_dir.display(),
                first.name,
                first.scenario_absolute
            );
        }
        if m.load != first.load || m.points != first.points {
            bail!(
                "{}: scenario `{}` run with other options or seeds than in {} (--quick, --set, --seed, \
                 --replications, or the file changed between the shards)",
                dir.display(),
                m.name,
                first_dir.display()
            );
        }
        same_split(dir, m.shard, m.of, first_dir, first.of, &mut seen)?;
        if let Some(u) = m.unfinished.first() {
            bail!(
                "{}: run p{}/r{} did not finish ({}); run that shard again",
                dir.display(),
                u.point,
                u.replication,
                u.why
            );
        }
    }
    // The file as the shards gave it when it is still there (so the study is the same, path included), else by its
    // absolute path (a merge from another folder).
    let given = Path::new(&first.scenario);
    let same = |p: &Path| std::fs::canonicalize(p).ok() == std::fs::canonicalize(&first.scenario_absolute).ok();
    let path = if given.exists() && same(given) { given } else { Path::new(&first.scenario_absolute) };
    let study = Study::load(path, &first.load.options(plugins))?;
    if point_ids(&study) != first.points {
        bail!(
            "{}: {} changed since the shards ran (its sweep points differ from theirs); run the shards again",
            first_dir.display(),
            path.display()
        );
    }
    let shard = |m: &StudyManifest| ShardRun {
        shard: Shard { index: m.shard, count: m.of },
        offset: m.offset,
        load: m.load.clone(),
    };
    let mut runs: BTreeMap<(usize, u32), (Finished, &Path)> = BTreeMap::new();
    let mut sources = Vec::new();
    for (dir, m) in &shards {
        let mut held = Vec::new();
        for r in &m.runs {
            let known = study.points.get(r.point).is_some_and(|p| r.replication < p.plan.replications);
            if !known || !shard(m).takes(&study, r.point, r.replication) {
                bail!(
                    "{}: holds run p{}/r{}, which is not shard {}/{}'s",
                    dir.display(),
                    r.point,
                    r.replication,
                    m.shard,
                    m.of
                );
            }
            let metrics = r
                .metrics
                .iter()
                .map(|(k, v)| {
                    read_exact(v).map(|x| (k.clone(), x)).with_context(|| {
                        format!("{}: run p{}/r{}: metric `{k}` is not a number", dir.display(), r.point, r.replication)
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            // The seed the plan gives the run: another means a manifest edited or made by other code.
            let seed = run::seed_of(&study.points[r.point].plan, r.replication);
            if r.seed != seed {
                bail!(
                    "{}: run p{}/r{} ran with seed {}, not the plan's {seed}",
                    dir.display(),
                    r.point,
                    r.replication,
                    r.seed
                );
            }
            let finished = Finished { point: r.point, rep: r.replication, seed: r.seed, metrics };
            if let Some((_, other)) = runs.insert((r.point, r.replication), (finished, dir)) {
                bail!(
                    "{} and {} both hold run p{}/r{}: overlapping shards",
                    other.display(),
                    dir.display(),
                    r.point,
                    r.replication
                );
            }
            held.push((r.point, r.replication));
        }
        sources.push((dir.clone(), held));
    }
    let missing: Vec<(usize, u32)> = study
        .points
        .iter()
        .flat_map(|p| (0..p.plan.replications).map(move |r| (p.index, r)))
        .filter(|k| !runs.contains_key(k))
        .collect();
    if let Some(&(point, rep)) = missing.first() {
        // The first few only: N comes from a file, and may be huge.
        let named: Vec<String> = missing.iter().take(NAMED).map(|(p, r)| format!("p{p}/r{r}")).collect();
        let more = if missing.len() > NAMED { format!(" and {} more", missing.len() - NAMED) } else { String::new() };
        let absent: Vec<String> =
            (1..=first.of).filter(|k| !seen.contains_key(k)).take(NAMED).map(|k| format!("{k}/{}", first.of)).collect();
        let why = if absent.is_empty() {
            // Every shard was given: the one that owns the first missing run stopped before it.
            let owner = first.offset.wrapping_add(position(&study, point, rep)) % first.of.max(1) as usize + 1;
            format!("shard {owner}/{} stopped before them: run it again", first.of)
        } else {
            let unnamed = (first.of as usize).saturating_sub(seen.len() + absent.len());
            let others = if unnamed > 0 { format!(" and {unnamed} more") } else { String::new() };
            format!("shard(s) {}{others} not given", absent.join(", "))
        };
        bail!(
            "scenario `{}`: {} of {} runs missing ({}{more}): {why}",
            study.name,
            missing.len(),
            tasks(&study),
            named.join(", ")
        );
    }
    let result = summarise(&study, runs.into_values().map(|(f, _)| f).collect(), Vec::new());
    Ok(MergedStudy { study, result, sources })
}

impl MergedStudy {
    /// Writes the study's files into `out`, with every run's folder (and each point's charts) hard-linked from its
    /// shard, or copied where links cannot be made: `out` is laid out as one run of the whole study; with `report`,
    /// its `report.md` too, by `report` (a study `run` ran in shards; a family's gets one for the family).
    pub fn write(&self, out: &Path, report: Option<super::StudyReport>) -> anyhow::Result<()> {
        for (dir, _) in &self.sources {
            if std::fs::canonicalize(dir).ok() == std::fs::canonicalize(out).ok() {
                bail!("--out {} is one of the shards; merge into another folder", out.display());
            }
        }
        let claim = outputs::prepare_folder(&self.study, out, "gridmarket merge")?;
        for (dir, held) in &self.sources {
            for &(point, rep) in held {
                link_files(&run_dir(dir, point, rep), &run_dir(out, point, rep))?;
                if rep == 0 {
                    // A point's charts are written with its replication 0.
                    link_files(&dir.join(format!("p{point}")), &out.join(format!("p{point}")))?;
                }
            }
        }
        outputs::write_study(&self.study, &self.result, out)
            .with_context(|| format!("writing the study's files into {}", out.display()))?;
        if let Some(report) = report {
            report(&self.study, &self.result, out)
                .with_context(|| format!("writing {}", out.join("report.md").display()))?;
        }
        Ok(claim.seal()?)
    }
}

/// Links (or copies) the files directly in `from` into `to`, each atomically.
fn link_files(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let entries = std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))?;
    for entry in entries {
        let src = entry.with_context(|| format!("reading {}", from.display()))?.path();
        if !src.is_file() {
            continue;
        }
        let name = src.file_name().unwrap_or_default();
        let dst = to.join(name);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(".merging");
        let tmp = to.join(tmp_name);
        let _ = std::fs::remove_file(&tmp);
        if std::fs::hard_link(&src, &tmp).is_err() {
            std::fs::copy(&src, &tmp).with_context(|| format!("copying {} to {}", src.display(), tmp.display()))?;
        }
        std::fs::rename(&tmp, &dst).with_context(|| format!("writing {}", dst.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_count_from_one_and_take_turns() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s, Shard { index: 2, count: 3 });
        assert_eq!((0..7).filter(|&i| s.takes(i)).collect::<Vec<_>>(), vec![1, 4]);
        for bad in ["0/3", "4/3", "1", "a/3", "1/0", "-1/3", "1/3/4"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad} accepted");
        }
        // Every task falls on exactly one shard.
        let all: Vec<Shard> = (1..=4).map(|k| Shard { index: k, count: 4 }).collect();
        assert!((0..50).all(|i| all.iter().filter(|s| s.takes(i)).count() == 1));
    }

    #[test]
    fn metric_values_read_back_to_the_same_bits() {
        for x in [0.1 + 0.2, 1e-310, -0.0, 3.0, f64::MAX, f64::INFINITY, f64::NEG_INFINITY] {
            let text = serde_json::to_string(&exact(x)).unwrap();
            let back = read_exact(&serde_json::from_str(&text).unwrap()).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x} as {text}");
        }
        assert!(read_exact(&exact(f64::NAN)).unwrap().is_nan());
    }
}
