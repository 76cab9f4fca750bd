//! Result files that are never half-written, and the CSV text that goes into them.
//!
//! A long sweep may be interrupted, or a report may be regenerated while another tool reads the old one. With
//! [`write_atomic`] a reader sees either the old file or the complete new one: the bytes go to a hidden temporary
//! file in the same directory (so the final `rename` never crosses file systems), are flushed to disk, and then
//! replace the target in one step. A crash may leave a stray `.NAME.PID.N.tmp` file behind but never a truncated
//! target.
//!
//! [`Csv`] builds RFC 4180-style text in memory with deterministic formatting, so the same results always give the
//! same bytes and files can be compared with `diff` across runs.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically: readers see the old content or the new one, never a mix.
///
/// Missing parent directories are created. Replacing a file resets its permissions to the defaults for new files;
/// the rename itself is not fsynced, so after a power loss the target may be the old version, but never a partial
/// one.
///
/// # Errors
///
/// Any I/O error from creating the directories, writing and syncing the temporary file, or renaming it (e.g. the
/// target is a directory); `InvalidInput` if `path` has no file name. The temporary file is then removed and the
/// target is left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not a file path: {}", path.display())))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let (tmp, file) = create_temp(dir, name)?;
    let result = fill(file, bytes).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        // Best effort: the original error is the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Distinguishes temporary files of concurrent writes within one process; the pid separates processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How many names to try when stale temporaries from a crashed process with a reused pid are in the way.
const TEMP_ATTEMPTS: usize = 64;

/// Creates a fresh `.NAME.PID.N.tmp` next to the target; `create_new` guarantees no one else's file is reused.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut attempt = 0;
    loop {
        let mut tmp_name = OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.{}.tmp", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        let tmp = dir.join(tmp_name);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt + 1 < TEMP_ATTEMPTS => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Writes and flushes to disk before the rename, so the renamed file can never be observed partly written.
fn fill(mut file: File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

/// One CSV cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// Text, quoted only if it contains a comma, a double quote, a carriage return or a newline.
    Str(&'a str),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer, e.g. a seed, which may not fit in `i64`.
    UInt(u64),
    /// A float in shortest round-trip form (`0.1`, `3`, `-2.5`); NaN becomes an empty cell, infinities
    /// `inf`/`-inf`.
    Num(f64),
    /// An empty cell.
    Empty,
}

/// CSV text built in memory: a header line, then one line per [`Csv::row`], each ended by `\n`.
///
/// Rows are written as given; keeping them as wide as the header is the caller's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csv {
    text: String,
}

impl Csv {
    /// Starts a table with the given column names.
    pub fn new(header: &[&str]) -> Csv {
        let mut csv = Csv { text: String::new() };
        csv.line(header.iter().map(|&h| Field::Str(h)));
        csv
    }

    /// Appends one record.
    pub fn row(&mut self, fields: &[Field]) {
        self.line(fields.iter().copied());
    }

    /// The finished UTF-8 text, ready for [`write_atomic`].
    pub fn into_bytes(self) -> Vec<u8> {
        self.text.into_bytes()
    }

    fn line<'a>(&mut self, fields: impl Iterator<Item = Field<'a>>) {
        for (i, field) in fields.enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            match field {
                Field::Str(s) if s.contains([',', '"', '\n', '\r']) => {
                    self.text.push('"');
                    self.text.push_str(&s.replace('"', "\"\""));
                    self.text.push('"');
                }
                Field::Str(s) => self.text.push_str(s),
                Field::Int(v) => self.text.push_str(&v.to_string()),
                Field::UInt(v) => self.text.push_str(&v.to_string()),
                Field::Num(v) if v.is_nan() => {}
                // Display for f64 is the shortest string that parses back to the same value.
                Field::Num(v) => self.text.push_str(&v.to_string()),
                Field::Empty => {}
            }
        }
        self.text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, empty directory per test, so tests can run in parallel.
    fn scratch_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gridmarket-output-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn atomic_write_creates_and_replaces_without_leftovers() {
        let dir = scratch_dir("replace");
        let target = dir.join("nested/deeper/results.csv");
        write_atomic(&target, b"old contents, longer than the new").expect("first write");
        write_atomic(&target, b"new").expect("second write");
        assert_eq!(fs::read(&target).expect("read back"), b"new");
        assert_eq!(entries(&dir.join("nested/deeper")), ["results.csv"]);
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn atomic_write_failure_keeps_old_content_and_cleans_up() {
        let dir = scratch_dir("failure");
        // The would-be parent directory is a regular file: nothing can be created under it.
        let blocker = dir.join("report");
        fs::write(&blocker, "keep me").expect("setup");
        assert!(write_atomic(&blocker.join("out.svg"), b"x").is_err());
        assert_eq!(fs::read_to_string(&blocker).expect("read"), "keep me");

        // The target is a non-empty directory: the temporary is written, the rename fails, the temporary goes.
        let occupied = dir.join("occupied");
        fs::create_dir(&occupied).expect("setup");
        fs::write(occupied.join("inner"), "inner").expect("setup");
        assert!(write_atomic(&occupied, b"x").is_err());
        assert_eq!(fs::read_to_string(occupied.join("inner")).expect("read"), "inner");
        assert_eq!(entries(&dir), ["occupied", "report"]);

        assert_eq!(write_atomic(Path::new("/"), b"x").map_err(|e| e.kind()), Err(io::ErrorKind::InvalidInput));
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        let mut csv = Csv::new(&["policy", "note, with comma", "seed", "value"]);
        csv.row(&[Field::Str("MOV"), Field::Str("plain"), Field::UInt(u64::MAX), Field::Num(0.1)]);
        csv.row(&[Field::Str("say \"hi\""), Field::Str("two\nlines"), Field::Int(-7), Field::Num(f64::NAN)]);
        csv.row(&[Field::Empty, Field::Str("cr\r"), Field::Int(0), Field::Num(-2.5e-7)]);
        csv.row(&[Field::Num(3.0), Field::Num(f64::NEG_INFINITY), Field::Num(1e21), Field::Num(-0.0)]);
        let text = String::from_utf8(csv.into_bytes()).expect("utf-8");
        assert_eq!(
            text,
            "policy,\"note, with comma\",seed,value\n\
             MOV,plain,18446744073709551615,0.1\n\
             \"say \"\"hi\"\"\",\"two\nlines\",-7,\n\
             ,\"cr\r\",0,-0.00000025\n\
             3,-inf,1000000000000000000000,-0\n"
        );
    }

    #[test]
    fn csv_floats_round_trip() {
        for v in [0.1 + 0.2, 1.0 / 3.0, f64::MAX, f64::MIN_POSITIVE, -123.456e-300] {
            let mut csv = Csv::new(&[]);
            csv.row(&[Field::Num(v)]);
            let text = String::from_utf8(csv.into_bytes()).expect("utf-8");
            assert_eq!(text.trim().parse::<f64>().ok(), Some(v));
        }
    }
}
