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
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Writes what `fill` writes to `path` atomically, as [`write_atomic`], through a buffer: a large file is written
/// as it is produced rather than built in memory first. When `fill` fails, the target is left as it was.
///
/// # Errors
///
/// As [`write_atomic`], and any error of `fill`.
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not a file path: {}", path.display())))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let (tmp, file) = create_temp(dir, name)?;
    let result = filled(file, fill).and_then(|()| fs::rename(&tmp, path));
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
fn filled(file: File, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, file);
    fill(&mut out)?;
    out.into_inner().map_err(io::IntoInnerError::into_error)?.sync_all()
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
        push_line(&mut self.text, fields);
    }
}

/// CSV written a row at a time into `out`, in the same form as [`Csv`]: a table too large to build in memory.
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    out: W,
    /// The line being formatted, reused.
    line: String,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a table with the given column names.
    ///
    /// # Errors
    ///
    /// Any error writing the header into `out`.
    pub fn new(out: W, header: &[&str]) -> io::Result<CsvWriter<W>> {
        let mut csv = CsvWriter { out, line: String::new() };
        csv.write(header.iter().map(|&h| Field::Str(h)))?;
        Ok(csv)
    }

    /// Appends one record.
    ///
    /// # Errors
    ///
    /// Any error writing it into `out`.
    pub fn row(&mut self, fields: &[Field]) -> io::Result<()> {
        self.write(fields.iter().copied())
    }

    fn write<'a>(&mut self, fields: impl Iterator<Item = Field<'a>>) -> io::Result<()> {
        self.line.clear();
        push_line(&mut self.line, fields);
        self.out.write_all(self.line.as_bytes())
    }
}

/// Appends one CSV line, ended by `\n`, to `text`.
fn push_line<'a>(text: &mut String, fields: impl Iterator<Item = Field<'a>>) {
    use std::fmt::Write as _;
    for (i, field) in fields.enumerate() {
        if i > 0 {
            text.push(',');
        }
        // Writing into a `String` cannot fail.
        let _ = match field {
            Field::Str(s) if s.contains([',', '"', '\n', '\r']) => {
                text.push('"');
                text.push_str(&s.replace('"', "\"\""));
                text.push('"');
                Ok(())
            }
            Field::Str(s) => {
                text.push_str(s);
                Ok(())
            }
            Field::Int(v) => write!(text, "{v}"),
            Field::UInt(v) => write!(text, "{v}"),
            Field::Num(v) if v.is_nan() => Ok(()),
            // Display for f64 is the shortest string that parses back to the same value.
            Field::Num(v) => write!(text, "{v}"),
            Field::Empty => Ok(()),
        };
    }
    text.push('\n');
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
    fn a_table_written_row_by_row_has_the_bytes_of_one_built_in_memory() {
        let header = ["name", "note, with comma", "n", "x"];
        let rows = [
            [Field::Str("a\"b"), Field::Empty, Field::UInt(u64::MAX), Field::Num(0.1 + 0.2)],
            [Field::Str("plain"), Field::Int(-3), Field::UInt(0), Field::Num(f64::NAN)],
        ];
        let mut csv = Csv::new(&header);
        let mut streamed = CsvWriter::new(Vec::new(), &header).unwrap();
        for row in &rows {
            csv.row(row);
            streamed.row(row).unwrap();
        }
        assert_eq!(streamed.out, csv.into_bytes());
    }

    #[test]
    fn a_file_whose_writer_fails_halfway_leaves_the_old_one_and_no_temporary() {
        let dir = scratch_dir("halfway");
        let target = dir.join("jobs.csv");
        write_atomic(&target, b"old").unwrap();
        let failed = write_atomic_with(&target, |out| {
            out.write_all(&[b'x'; 100_000])?;
            Err(io::Error::other("interrupted"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "interrupted");
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(entries(&dir), vec!["jobs.csv".to_string()]);
        write_atomic_with(&target, |out| out.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
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
