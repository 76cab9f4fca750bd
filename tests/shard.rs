//! Sharded runs and their merge, through the built binary: a study (`run --shard`) and a family (`reproduce
//! --shard`) split into 3 shards and merged give every file of one whole run byte for byte (`report.md` with its
//! verdicts and charts included); only each run's `run.json` differs, in its `command` line. A merge refuses a
//! missing shard, overlapping shards, shards of another scenario or of other options, and a folder that is not a
//! shard, naming the folder, and then writes nothing. `slurm` writes a job array of shards and a merge after it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tiny family (tests/cli.rs): tiny.toml, 3 points × 2 replications at --quick, with targets and checks, one
/// of them comparing it with half.toml (1 point × 2 replications).
const FAMILY: &str = "tests/scenarios";
const TINY: &str = "tests/scenarios/tiny/tiny.toml";
const HALF: &str = "tests/scenarios/tiny/half.toml";

fn gridmarket(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gridmarket"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("the gridmarket binary runs")
}

#[track_caller]
fn assert_exit(o: &Output, code: i32, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{what}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs a merge that must be refused: exit 2, an error naming `names`, and no output folder.
#[track_caller]
fn refused(dirs: &[String], out: &Path, names: &[&str]) {
    let mut args = vec!["merge"];
    args.extend(dirs.iter().map(String::as_str));
    let out_arg = out.to_string_lossy().into_owned();
    args.extend(["--out", &out_arg]);
    let o = gridmarket(&args);
    assert_exit(&o, 2, &format!("{args:?}"));
    let err = String::from_utf8_lossy(&o.stderr);
    for n in names {
        assert!(err.contains(n), "{args:?}: the error does not say `{n}`:\n{err}");
    }
    assert!(!out.exists(), "{args:?}: a refused merge wrote {}", out.display());
}

/// A fresh folder under the temporary directory, removed on drop unless the test failed.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("gridmarket-shard-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a temporary folder");
        TempDir(dir)
    }

    fn arg(&self, p: &str) -> String {
        self.0.join(p).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Every file under `dir` by its relative path, with the `command` line of each `run.json` left out (it is the
/// command of the process that ran the run).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("reading an output folder") {
            let path = e.expect("a folder entry").path();
            if path.is_dir() {
                walk(root, &path, out);
                continue;
            }
            let rel = path.strip_prefix(root).expect("under the root").to_string_lossy().into_owned();
            let mut bytes = std::fs::read(&path).expect("reading an output file");
            if rel.ends_with("run.json") {
                let text = String::from_utf8(bytes).expect("UTF-8");
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("\"command\"")).collect();
                bytes = lines.join("\n").into_bytes();
            }
            out.insert(rel, bytes);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[track_caller]
fn assert_same_tree(whole: &Path, merged: &Path, must_have: &[&str]) {
    let (a, b) = (tree(whole), tree(merged));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "the merged folder has other files");
    for (path, bytes) in &a {
        assert!(*bytes == b[path], "{path} differs between the whole run and the merge");
    }
    for f in must_have {
        assert!(a.contains_key(*f), "the whole run has no {f}: {:?}", a.keys().collect::<Vec<_>>());
    }
}

#[test]
fn a_study_in_three_shards_merges_into_the_whole_run() {
    let tmp = TempDir::new("study");
    let o = gridmarket(&["run", TINY, "--quick", "--quiet", "--jobs", "2", "--out", &tmp.arg("whole")]);
    assert_exit(&o, 0, "the whole run");
    let shards: Vec<String> = (1..=3).map(|k| tmp.arg(&format!("shard-{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{}/3", k + 1);
        let o = gridmarket(&["run", TINY, "--quick", "--quiet", "--shard", &shard, "--out", dir]);
        assert_exit(&o, 0, &format!("shard {shard}"));
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("shard {shard}: 2 of 6 runs")));
        // A shard writes no summary: it would be wrong for a part of the runs.
        assert!(!Path::new(dir).join("summary.csv").exists(), "shard {shard} wrote a summary");
    }
    // Round robin over the plan's order (point by point): shard 2 holds p0/r1 and p2/r0.
    assert!(Path::new(&shards[1]).join("p0/r1/run.json").exists() && Path::new(&shards[1]).join("p2/r0").exists());
    // Any order of the folders.
    let o = gridmarket(&["merge", &shards[2], &shards[0], &shards[1], "--out", &tmp.arg("merged")]);
    assert_exit(&o, 0, "the merge");
    assert!(String::from_utf8_lossy(&o.stdout).contains("utilisation"), "the merge prints the summary");
    let files = ["summary.csv", "summary.json", "points.csv", "runs.csv", "differences.csv", "expectations.csv"];
    assert_same_tree(&tmp.0.join("whole"), &tmp.0.join("merged"), &files);
    assert_same_tree(&tmp.0.join("whole"), &tmp.0.join("merged"), &["checks.csv", "report.md"]);
    assert_same_tree(&tmp.0.join("whole"), &tmp.0.join("merged"), &["p0/utilisation.svg", "p2/r1/jobs.csv"]);
}

#[test]
fn a_family_in_three_shards_merges_into_the_whole_reproduction() {
    let tmp = TempDir::new("family");
    let whole = ["reproduce", "tiny", "--scenarios", FAMILY, "--quick", "--quiet", "--out", &tmp.arg("whole")];
    assert_exit(&gridmarket(&whole), 0, "the whole reproduction");
    let shards: Vec<String> = (1..=3).map(|k| tmp.arg(&format!("shard-{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{}/3", k + 1);
        let args = ["reproduce", "tiny", "--scenarios", FAMILY, "--quick", "--quiet", "--shard", &shard, "--out", dir];
        assert_exit(&gridmarket(&args), 0, &format!("shard {shard}"));
        assert!(!Path::new(dir).join("report.md").exists(), "shard {shard} wrote a report");
    }
    // Tasks are counted across the family: half.toml's two runs (tasks 6 and 7) fall on shards 1 and 2.
    assert!(Path::new(&shards[0]).join("half/p0/r0").exists() && Path::new(&shards[1]).join("half/p0/r1").exists());
    let o = gridmarket(&["merge", &shards[0], &shards[1], &shards[2], "--out", &tmp.arg("merged")]);
    assert_exit(&o, 0, "the merge");
    let report = std::fs::read_to_string(tmp.0.join("merged/report.md")).expect("report.md");
    assert!(report.contains("| target |") && report.contains("inconclusive"), "{report}");
    let files = ["report.md", "tiny-utilisation.svg", "tiny/summary.csv", "tiny/expectations.csv", "half/checks.csv"];
    assert_same_tree(&tmp.0.join("whole"), &tmp.0.join("merged"), &files);

    // A study's shards are not a family's.
    let study = tmp.arg("study-shard");
    assert_exit(&gridmarket(&["run", TINY, "--quick", "--quiet", "--shard", "1/3", "--out", &study]), 0, "run");
    refused(&[shards[0].clone(), study], &tmp.0.join("mixed"), &["shard-1", "a shard of a family"]);
    refused(&shards[..2], &tmp.0.join("missing"), &["runs missing", "shard(s) 3/3 not given"]);
}

#[test]
fn a_merge_refuses_shards_that_do_not_make_one_study() {
    let tmp = TempDir::new("refused");
    let shard = |file: &str, k: &str, dir: &str, extra: &[&str]| {
        let mut args = vec!["run", file, "--quick", "--quiet", "--shard", k, "--out"];
        let dir = tmp.arg(dir);
        args.push(&dir);
        args.extend(extra);
        assert_exit(&gridmarket(&args), 0, &format!("{args:?}"));
        dir
    };
    let s1 = shard(TINY, "1/3", "s1", &[]);
    let s2 = shard(TINY, "2/3", "s2", &[]);
    let s3 = shard(TINY, "3/3", "s3", &[]);
    let out = tmp.0.join("merged");
    refused(&[s1.clone(), s3.clone()], &out, &["2 of 6 runs missing", "p0/r1", "shard(s) 2/3 not given"]);
    refused(&[s1.clone(), s2.clone(), s2.clone(), s3.clone()], &out, &["s2", "both shard 2/3", "overlapping"]);
    let half = shard(HALF, "2/3", "half", &[]);
    refused(&[s1.clone(), half, s3.clone()], &out, &["half", "a shard of scenario `half`", "`tiny`"]);
    let seeded = shard(TINY, "2/3", "seeded", &["--seed", "5"]);
    refused(&[s1.clone(), seeded, s3.clone()], &out, &["seeded", "other options or seeds"]);
    let other_split = shard(TINY, "2/4", "four", &[]);
    refused(&[s1.clone(), other_split, s3.clone()], &out, &["four", "shard 2/4", "shard of 3"]);
    let plain = tmp.arg("plain");
    assert_exit(&gridmarket(&["run", TINY, "--quick", "--quiet", "--out", &plain]), 0, "a whole run");
    refused(&[s1.clone(), s2.clone(), s3.clone(), plain], &out, &["plain", "not a shard", "shard.json"]);
    // A shard's file edited by hand to hold another shard's run.
    let forged = tmp.arg("forged");
    std::fs::create_dir_all(&forged).expect("a folder");
    let manifest = std::fs::read_to_string(Path::new(&s1).join("shard.json")).expect("shard.json");
    std::fs::write(Path::new(&forged).join("shard.json"), manifest.replace("\"shard\": 1", "\"shard\": 2"))
        .expect("writing");
    refused(&[s1.clone(), forged, s3.clone()], &out, &["forged", "not shard 2/3's"]);
    // Every shard given, but one stopped before its runs (its manifest lists none): that one is named.
    let stopped = tmp.arg("stopped");
    std::fs::create_dir_all(&stopped).expect("a folder");
    let manifest = std::fs::read_to_string(Path::new(&s2).join("shard.json")).expect("shard.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&manifest).expect("JSON");
    manifest["runs"] = serde_json::json!([]);
    std::fs::write(Path::new(&stopped).join("shard.json"), manifest.to_string()).expect("writing");
    refused(&[s1.clone(), stopped, s3.clone()], &out, &["2 of 6 runs missing", "shard 2/3 stopped before them"]);
    // A run whose seed is not the one the plan gives it.
    let reseeded = tmp.arg("reseeded");
    std::fs::create_dir_all(&reseeded).expect("a folder");
    manifest = serde_json::from_str(&std::fs::read_to_string(Path::new(&s2).join("shard.json")).expect("shard.json"))
        .expect("JSON");
    manifest["runs"][0]["seed"] = serde_json::json!(999_999);
    std::fs::write(Path::new(&reseeded).join("shard.json"), manifest.to_string()).expect("writing");
    refused(&[s1.clone(), reseeded, s3.clone()], &out, &["reseeded", "seed 999999, not the plan's"]);
    // And the three of them merge.
    assert_exit(&gridmarket(&["merge", &s1, &s2, &s3, "--out", &tmp.arg("merged")]), 0, "the merge");
    assert!(out.join("summary.csv").exists());
}

#[test]
fn shards_are_counted_from_one_and_precision_cannot_be_sharded() {
    let tmp = TempDir::new("args");
    for bad in ["0/3", "4/3", "3"] {
        let o = gridmarket(&["run", TINY, "--quick", "--shard", bad, "--out", &tmp.arg("x")]);
        assert_exit(&o, 2, bad);
        assert!(String::from_utf8_lossy(&o.stderr).contains("1 ≤ K ≤ N"), "{bad}");
    }
    let file = tmp.0.join("precise.toml");
    let text = std::fs::read_to_string(HALF).expect("half.toml");
    let precise = format!("{text}\n[precision]\nmetric = \"utilisation\"\nrelative = 0.05\nmax-replications = 4\n");
    std::fs::write(&file, precise).expect("writing");
    let file = file.to_string_lossy().into_owned();
    let o = gridmarket(&["run", &file, "--quiet", "--shard", "1/2", "--out", &tmp.arg("p")]);
    assert_exit(&o, 2, "a sharded run of a study with a target precision");
    assert!(String::from_utf8_lossy(&o.stderr).contains("target precision"));
}

#[test]
fn slurm_writes_an_array_of_shards_and_a_merge_after_it() {
    let tmp = TempDir::new("slurm");
    let out = tmp.arg("cluster");
    let args = ["slurm", TINY, "--quick", "--time", "00:10:00", "--partition", "debug", "--out", &out];
    let o = gridmarket(&args);
    assert_exit(&o, 0, "slurm");
    let out = std::fs::canonicalize(&out).expect("the folder was made");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).expect(f);
    let (array, merge, submit) = (read("array.sh"), read("merge.sh"), read("submit.sh"));
    let file = std::fs::canonicalize(TINY).expect("tiny.toml");
    let dir = format!("'{}'", out.display());
    // One shard per run by default: 3 points × 2 replications at --quick.
    assert!(array.contains("#SBATCH --array=1-6\n"), "{array}");
    assert!(array.contains("#SBATCH --time=00:10:00\n") && array.contains("#SBATCH --partition=debug\n"), "{array}");
    assert!(array.contains(&format!("run '{}' '--quick'", file.display())), "{array}");
    assert!(array.contains(&format!("--shard \"$SLURM_ARRAY_TASK_ID/6\" --out {dir}/shard-\"$SLURM_ARRAY_TASK_ID\"")));
    assert!(merge.contains(&format!("merge {dir}/shard-{{1..6}} --out {dir}/merged")), "{merge}");
    assert!(submit.contains("--dependency=afterok:\"$array\""), "{submit}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join("submit.sh")).expect("submit.sh").permissions().mode();
        assert!(mode & 0o111 != 0, "submit.sh is not executable");
    }
    let o = gridmarket(&["slurm", TINY, "--array-size", "2", "--out", &tmp.arg("two")]);
    assert_exit(&o, 0, "slurm --array-size 2");
    let array = std::fs::read_to_string(tmp.0.join("two/array.sh")).expect("array.sh");
    assert!(array.contains("--array=1-2\n") && array.contains("/2\" --out") && !array.contains("--time"), "{array}");
    let o = gridmarket(&["slurm", TINY, "--time", "1h", "--out", &tmp.arg("bad")]);
    assert_exit(&o, 2, "a time Slurm cannot read");
}

/// The fuzz test's seed shards (tests/fixtures/shard/, shards of tests/fixtures/hand.toml with 2 replications) are
/// valid: 1/1 merges, so its mutants reach the checks and the summaries, and 1/2 lacks a run. When hand.toml or
/// gridmarket's version changes, write them again: `gridmarket run tests/fixtures/hand.toml --replications 2
/// --shard 1/1 --out DIR` (and 1/2), with `scenario_absolute` set to the relative path.
#[test]
fn the_fuzzed_seed_shards_are_valid() {
    use gridmarket::runner::shard::{Merged, merge_manifests};
    let read = |f: &str| std::fs::read(Path::new("tests/fixtures/shard").join(f)).expect(f);
    let whole = merge_manifests(&[(PathBuf::from("hand-1-1"), read("hand-1-1.json"))], &Default::default());
    match whole {
        Ok(Merged::Study(m)) => assert_eq!(m.result.runs.len(), 2),
        Ok(Merged::Family(..)) => panic!("a study's shard read as a family's"),
        Err(e) => panic!("the seed shard 1/1 does not merge (write it again, see above): {e:#}"),
    }
    let half = merge_manifests(&[(PathBuf::from("hand-1-2"), read("hand-1-2.json"))], &Default::default())
        .err()
        .expect("a run missing");
    assert!(format!("{half:#}").contains("1 of 2 runs missing"), "{half:#}");
}
