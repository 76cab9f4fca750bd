//! Output folders that are gridmarket's alone while it writes them, and never hold a file it did not write.
//!
//! A command that writes into a folder first claims it ([`claim`]): it takes the folder's lock, `.gridmarket.lock`
//! (its process id and command line), so that a second process writing into the same folder at once is refused with
//! who holds it; a lock whose process has gone (a run killed with `kill -9`) is taken over. The folder's manifest,
//! `.gridmarket-files`, names the entries gridmarket wrote there; a folder holding anything else (a user's own
//! `summary.csv`, their notes) is refused before anything runs, so no file of theirs is ever overwritten. Outputs
//! written before manifests existed are adopted when the caller recognises them as its own.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::output::write_atomic;

/// The lock file of an output folder.
pub const LOCK: &str = ".gridmarket.lock";
/// The manifest of an output folder: the entries gridmarket wrote there, one name a line.
pub const MANIFEST: &str = ".gridmarket-files";

/// A claimed output folder: the lock is held until it is dropped.
#[derive(Debug)]
pub struct Claim {
    root: PathBuf,
}

impl Claim {
    /// Records every entry of the folder in its manifest, beside those declared: whatever is there now was written
    /// by this claim or was gridmarket's before it. Call when done writing.
    pub fn seal(&self) -> io::Result<()> {
        let mut owned = manifest(&self.root).unwrap_or_default();
        owned.extend(entries(&self.root)?);
        write_manifest(&self.root, &owned)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Only our own lock: a folder taken over from a dead process holds our pid.
        let lock = self.root.join(LOCK);
        if read_lock(&lock).is_some_and(|(pid, _)| pid == std::process::id()) {
            let _ = std::fs::remove_file(lock);
        }
    }
}

/// Claims `root` for `command` (created if missing): takes its lock and checks that it holds only gridmarket's
/// entries. Entries named in its manifest are gridmarket's; without a manifest, `adopt` says whether what is there
/// is this command's own earlier output (a folder written before manifests). `declared` are the entries the command
/// will write, recorded at once so that a run killed midway leaves them owned for `--resume`.
///
/// # Errors
///
/// The folder is a file, cannot be created, is locked by a live process, or holds entries gridmarket did not write
/// (the message names them and what to do).
pub fn claim(root: &Path, command: &str, adopt: bool, declared: &[String]) -> io::Result<Claim> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("output folder {}: {e}", root.display()));
    if root.exists() && !root.is_dir() {
        return Err(named(io::Error::new(io::ErrorKind::AlreadyExists, "exists and is not a folder")));
    }
    std::fs::create_dir_all(root).map_err(named)?;
    lock(root, command)?;
    let claim = Claim { root: root.to_path_buf() };
    let present = entries(root).map_err(named)?;
    let owned = match manifest(root) {
        Some(owned) => owned,
        None if adopt => present.clone(),
        None => BTreeSet::new(),
    };
    let foreign: Vec<&String> = present.iter().filter(|e| !owned.contains(*e)).collect();
    if !foreign.is_empty() {
        let shown: Vec<&str> = foreign.iter().take(5).map(|s| s.as_str()).collect();
        let more = if foreign.len() > shown.len() {
            format!(" and {} more", foreign.len() - shown.len())
        } else {
            String::new()
        };
        let m = format!(
            "output folder {} holds what gridmarket did not write there ({}{more}), which it will not overwrite; \
             choose another --out or move them",
            root.display(),
            shown.join(", ")
        );
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, m));
    }
    write_manifest(root, &owned.into_iter().chain(declared.iter().cloned()).collect()).map_err(named)?;
    Ok(claim)
}

/// The entries of `root` but its lock, its manifest and the temporary files of writes under way.
fn entries(root: &Path) -> io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(root)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name != LOCK && name != MANIFEST && !(name.starts_with('.') && name.ends_with(".tmp")) {
            out.insert(name);
        }
    }
    Ok(out)
}

/// The entries the manifest of `root` names, if it has one.
fn manifest(root: &Path) -> Option<BTreeSet<String>> {
    Some(std::fs::read_to_string(root.join(MANIFEST)).ok()?.lines().map(String::from).collect())
}

fn write_manifest(root: &Path, entries: &BTreeSet<String>) -> io::Result<()> {
    let mut text = String::new();
    for e in entries {
        text.push_str(e);
        text.push('\n');
    }
    write_atomic(&root.join(MANIFEST), text.as_bytes())
}

/// The process id and command line in a lock file.
fn read_lock(path: &Path) -> Option<(u32, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (pid, command) = text.split_once('\n').unwrap_or((&text, ""));
    Some((pid.trim().parse().ok()?, command.trim().to_string()))
}

/// Whether process `pid` is alive (on Unix; elsewhere every lock is taken as held).
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
        // SAFETY: signal 0 only asks whether the process exists and may be signalled.
        let answer = unsafe { libc::kill(pid, 0) };
        answer == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Takes the lock of `root` for this process, taking over one whose process has gone.
fn lock(root: &Path, command: &str) -> io::Result<()> {
    let path = root.join(LOCK);
    for _ in 0..2 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => return writeln!(file, "{}\n{command}", std::process::id()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match read_lock(&path) {
                Some((pid, holder)) if pid != std::process::id() && alive(pid) => {
                    let holder = if holder.is_empty() { "a gridmarket command".into() } else { format!("`{holder}`") };
                    let m = format!(
                        "output folder {} is being written by process {pid} ({holder}); wait for it to end or \
                         choose another --out",
                        root.display()
                    );
                    return Err(io::Error::new(io::ErrorKind::WouldBlock, m));
                }
                // Ours already (one process claims a folder once), or left by a process that has gone.
                Some((pid, _)) if pid == std::process::id() => return Ok(()),
                _ => std::fs::remove_file(&path)?,
            },
            Err(e) => return Err(io::Error::new(e.kind(), format!("output folder {}: {e}", root.display()))),
        }
    }
    Err(io::Error::other(format!("output folder {}: cannot take its lock {LOCK}", root.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gridmarket-folder-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_folder_of_someone_elses_files_is_refused_and_ours_is_taken_again() {
        let dir = scratch("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("summary.csv"), "mine").unwrap();
        let e = claim(&dir, "c", false, &[]).unwrap_err();
        assert!(e.to_string().contains("holds what gridmarket did not write there (summary.csv)"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.join("summary.csv")).unwrap(), "mine");
        // Adopted as this command's own earlier output, it is claimed, and its manifest then says so.
        drop(claim(&dir, "c", true, &["p0".into()]).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join(MANIFEST)).unwrap(), "p0\nsummary.csv\n");
        assert!(!dir.join(LOCK).exists(), "the lock goes with the claim");
        let c = claim(&dir, "c", false, &[]).unwrap();
        std::fs::write(dir.join("report.md"), "ours").unwrap();
        c.seal().unwrap();
        drop(c);
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let e = claim(&dir, "c", false, &[]).unwrap_err();
        assert!(e.to_string().contains("(notes.txt)"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_live_holder_is_named_and_a_dead_ones_lock_taken_over() {
        let dir = scratch("lock");
        std::fs::create_dir_all(&dir).unwrap();
        // Process 1 (init) is alive and is not us.
        std::fs::write(dir.join(LOCK), "1\ngridmarket run x.toml\n").unwrap();
        let e = claim(&dir, "c", false, &[]).unwrap_err();
        assert!(e.to_string().contains("is being written by process 1 (`gridmarket run x.toml`)"), "{e}");
        // A pid no process has.
        std::fs::write(dir.join(LOCK), format!("{}\nold\n", i32::MAX)).unwrap();
        let c = claim(&dir, "new", false, &[]).unwrap();
        assert_eq!(read_lock(&dir.join(LOCK)), Some((std::process::id(), "new".into())));
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
