//! `gridmarket slurm`: the scripts that run a study on a Slurm cluster, one array task per shard, and merge the
//! shards once every task has succeeded.
//!
//! Three files: `array.sh`, an `sbatch` job array (`--array=1-N`, so that `$SLURM_ARRAY_TASK_ID` is the shard
//! number as `--shard K/N` counts it); `merge.sh`, the merge job; `submit.sh`, which submits the array, reads its job
//! id (`sbatch --parsable`) and submits the merge with `--dependency=afterok:<id>`. Paths are absolute and quoted
//! for the shell; the log paths go on `sbatch`'s command line in `submit.sh`, where the shell quotes them, rather
//! than in `#SBATCH` lines, which are not parsed by a shell.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The greatest array size Slurm accepts by default (`MaxArraySize` = 1001: indices up to 1000).
pub const MAX_ARRAY: u32 = 1000;

/// What the scripts run.
#[derive(Clone, Debug)]
pub struct Job {
    /// The study's name, in the job names.
    pub name: String,
    /// The `gridmarket` binary (absolute).
    pub binary: PathBuf,
    /// The scenario file (absolute).
    pub file: PathBuf,
    /// The folder of the scripts, the shards (`shard-K`), the logs (`logs/`) and the merged study (`merged/`).
    pub out: PathBuf,
    /// N: array tasks, one shard each.
    pub shards: u32,
    /// `--time` of each job, in a form Slurm reads (`HH:MM:SS`, `D-HH:MM:SS`, minutes).
    pub time: Option<String>,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--cpus-per-task` of an array task, passed to `run --jobs`.
    pub cpus: u32,
    /// Arguments of `run` that change the study (`--quick`, `--set`, `--seed`, `--replications`), passed as they are.
    pub run_args: Vec<String>,
}

/// Checks a `--time` value against Slurm's forms: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`.
pub fn check_time(t: &str) -> Result<String, String> {
    let (days, clock) = t.split_once('-').map_or((None, t), |(d, c)| (Some(d), c));
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = clock.split(':').collect();
    let fits = days.is_none_or(number) && parts.iter().all(|p| number(p)) && parts.len() <= 3;
    if !fits {
        return Err(format!("`{t}`: expected a Slurm time limit such as 01:30:00, 2-00:00:00 or 90 (minutes)"));
    }
    Ok(t.to_string())
}

/// Checks a `--partition` value: a name, or names separated by commas, as `#SBATCH` lines take them unquoted.
pub fn check_partition(p: &str) -> Result<String, String> {
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.,-".contains(&b)) {
        return Err(format!("`{p}`: expected a partition name (letters, digits, `_`, `.`, `-`; several with `,`)"));
    }
    Ok(p.to_string())
}

/// `s` quoted for a POSIX shell: in single quotes, each `'` closed, escaped and reopened.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn q(p: &Path) -> String {
    quote(&p.display().to_string())
}

/// The `#SBATCH` lines both jobs share.
fn common(job: &Job, name: &str) -> String {
    let mut s = format!("#SBATCH --job-name={name}\n");
    if let Some(t) = &job.time {
        let _ = writeln!(s, "#SBATCH --time={t}");
    }
    if let Some(p) = &job.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    s
}

/// A job name Slurm shows: the study's name with anything but letters, digits, `-`, `_` and `.` as `_`.
fn job_name(name: &str) -> String {
    let clean: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    format!("gridmarket-{clean}")
}

/// The three scripts, as (file name, text).
pub fn scripts(job: &Job) -> [(&'static str, String); 3] {
    let n = job.shards;
    let name = job_name(&job.name);
    let run_args: String = job.run_args.iter().map(|a| format!(" {}", quote(a))).collect();
    let array = format!(
        "#!/bin/bash\n\
         # Shard $SLURM_ARRAY_TASK_ID of {n} of scenario `{study}`: written by `gridmarket slurm`; submit with submit.sh.\n\
         #SBATCH --array=1-{n}\n\
         #SBATCH --cpus-per-task={cpus}\n\
         {common}\
         set -euo pipefail\n\
         exec {bin} run {file}{run_args} --quiet --jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" \\\n    \
         --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --out {out}/shard-\"$SLURM_ARRAY_TASK_ID\"\n",
        study = job.name.escape_debug(),
        cpus = job.cpus,
        common = common(job, &name),
        bin = q(&job.binary),
        file = q(&job.file),
        out = q(&job.out),
    );
    let merge = format!(
        "#!/bin/bash\n\
         # Merges the {n} shards of scenario `{study}` into merged/: written by `gridmarket slurm`; submitted by \
         submit.sh once every array task has succeeded.\n\
         {common}\
         set -euo pipefail\n\
         exec {bin} merge {out}/shard-{{1..{n}}} --out {out}/merged\n",
        study = job.name.escape_debug(),
        common = common(job, &format!("{name}-merge")),
        bin = q(&job.binary),
        out = q(&job.out),
    );
    let submit = format!(
        "#!/bin/bash\n\
         # Submits the {n} shards of scenario `{study}` as a job array, then their merge, which starts once every \
         shard has succeeded (afterok).\n\
         set -euo pipefail\n\
         mkdir -p {out}/logs\n\
         # --parsable prints the job id, followed by `;cluster` on a federation.\n\
         array=$(sbatch --parsable --output={out}/logs/shard-%a.out {out}/array.sh)\n\
         array=${{array%%;*}}\n\
         merge=$(sbatch --parsable --dependency=afterok:\"$array\" --output={out}/logs/merge.out {out}/merge.sh)\n\
         merge=${{merge%%;*}}\n\
         echo \"array job $array ({n} shards), merge job $merge: results in \"{out}/merged\n",
        study = job.name.escape_debug(),
        out = q(&job.out),
    );
    [("array.sh", array), ("merge.sh", merge), ("submit.sh", submit)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            name: "tiny sweep".into(),
            binary: "/opt/grid market/gridmarket".into(),
            file: "/home/o'brien/tiny.toml".into(),
            out: "/scratch/out".into(),
            shards: 7,
            time: Some("01:30:00".into()),
            partition: Some("short".into()),
            cpus: 2,
            run_args: vec!["--quick".into(), "--set".into(), "providers.big.pes=16".into()],
        }
    }

    #[test]
    fn the_array_runs_one_shard_per_task_and_the_merge_waits_for_all() {
        let [(_, array), (_, merge), (_, submit)] = scripts(&job());
        assert!(array.contains("#SBATCH --array=1-7\n"), "{array}");
        assert!(array.contains("#SBATCH --time=01:30:00\n#SBATCH --partition=short\n"), "{array}");
        assert!(array.contains("#SBATCH --cpus-per-task=2\n"), "{array}");
        assert!(array.contains("#SBATCH --job-name=gridmarket-tiny_sweep\n"), "{array}");
        assert!(
            array.contains(
                "exec '/opt/grid market/gridmarket' run '/home/o'\\''brien/tiny.toml' '--quick' '--set' \
                 'providers.big.pes=16' --quiet --jobs \"${SLURM_CPUS_PER_TASK:-2}\" \\\n    --shard \
                 \"$SLURM_ARRAY_TASK_ID/7\" --out '/scratch/out'/shard-\"$SLURM_ARRAY_TASK_ID\"\n"
            ),
            "{array}"
        );
        assert!(merge.contains("merge '/scratch/out'/shard-{1..7} --out '/scratch/out'/merged\n"), "{merge}");
        assert!(merge.contains("#SBATCH --job-name=gridmarket-tiny_sweep-merge\n"), "{merge}");
        assert!(!merge.contains("--array"), "{merge}");
        assert!(submit.contains("array=$(sbatch --parsable --output='/scratch/out'/logs/shard-%a.out"), "{submit}");
        assert!(submit.contains("--dependency=afterok:\"$array\""), "{submit}");
        assert!(submit.contains("'/scratch/out'/merge.sh"), "{submit}");
    }

    #[test]
    fn options_are_checked_and_absent_ones_left_out() {
        assert!(check_time("2-00:00:00").is_ok() && check_time("90").is_ok());
        assert!(check_time("1h").is_err() && check_time("").is_err());
        for bad in ["::", "--", "1:2:3:4", "-1", "1-", "1:"] {
            assert!(check_time(bad).is_err(), "{bad}");
        }
        assert!(check_time("1-12").is_ok() && check_time("30:00").is_ok());
        assert!(check_partition("short,long").is_ok() && check_partition("a b").is_err());
        let [(_, array), _, _] = scripts(&Job { time: None, partition: None, ..job() });
        assert!(!array.contains("--time") && !array.contains("--partition"), "{array}");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
