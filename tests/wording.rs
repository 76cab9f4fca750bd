//! What a user reads names the source works by author and year and says in plain words what they leave open: no
//! internal shorthand ("seed 000", "[GAP]", "[INTERP]") and no pointer to a folder outside the repository, in the
//! README files, `docs/`, the scenario files (comments and `source =` fields), `gridmarket list` and `gridmarket
//! schema`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Shorthand a user cannot resolve, matched case-insensitively.
const FORBIDDEN: [&str; 5] = ["seed 00", "[gap]", "[interp]", "../shared", "digest"];

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn command_output(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gridmarket")).args(args).output().unwrap();
    assert!(out.status.success(), "gridmarket {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// Every forbidden word in `text`, as `where: line`.
fn offences(place: &str, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| FORBIDDEN.iter().any(|w| line.to_lowercase().contains(w)))
        .map(|(i, line)| format!("{place}:{}: {line}", i + 1))
        .collect()
}

#[test]
fn test_user_facing_text_names_sources_in_plain_words() {
    let mut files = vec![PathBuf::from("README.md")];
    for dir in ["docs", "benches", "examples", "agents", "kernel"] {
        files_under(Path::new(dir), "md", &mut files);
    }
    files_under(Path::new("scenarios"), "toml", &mut files);
    assert!(files.len() > 20, "found only {files:?}");
    let mut found = Vec::new();
    for f in &files {
        found.extend(offences(&f.display().to_string(), &std::fs::read_to_string(f).unwrap()));
    }
    found.extend(offences("gridmarket list", &command_output(&["list"])));
    found.extend(offences("gridmarket schema", &command_output(&["schema"])));
    assert!(found.is_empty(), "user-facing text with internal shorthand:\n{}", found.join("\n"));
}

#[test]
fn test_the_check_catches_the_shorthand() {
    assert_eq!(offences("x", "ok\nas seed 000 ch3 says\n[GAP] here").len(), 2);
    assert!(offences("x", "Amini Salehi (2012), ch 3: not stated; we assume 3").is_empty());
}
