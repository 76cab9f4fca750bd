//! Field parsing shared by the SWF and GWF readers: −1 as unknown, errors with context.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use agents::registry::limits::{MAX_JOBS, MAX_LINE_BYTES, MAX_TIME};

use super::{JobStatus, Skipped, WorkloadError, WorkloadJob};

/// Header lines a trace may have: archive traces have a few dozen.
const MAX_HEADER_LINES: usize = 10_000;

/// The line grammar SWF and GWF share: comment lines become header entries, blank lines are skipped, every other
/// line is a record handed to the format's parser. An I/O error ends the stream; a parse error does not. A line, the
/// header and the jobs are bounded ([`MAX_LINE_BYTES`], [`MAX_HEADER_LINES`], [`MAX_JOBS`]): what is not a trace
/// (`/dev/zero`, a binary file) ends the stream with an error before it fills the memory.
pub(crate) struct Records<R> {
    reader: R,
    /// The source's name (usually its path), for error messages.
    pub name: String,
    /// 1-based number of the last line read.
    pub line: u64,
    /// Header entries read so far.
    pub header: Vec<(String, String)>,
    /// Records the parser declined (cannot be simulated).
    pub skipped: Skipped,
    /// Jobs returned so far.
    jobs: u64,
    comments: &'static [char],
    done: bool,
}

impl<R: BufRead> Records<R> {
    pub fn new(reader: R, name: String, comments: &'static [char]) -> Self {
        Records {
            reader,
            name,
            line: 0,
            header: Vec::new(),
            skipped: Skipped::default(),
            jobs: 0,
            comments,
            done: false,
        }
    }

    /// An error about the line being read, which ends the stream.
    fn fail<T>(&mut self, message: String) -> Option<Result<T, WorkloadError>> {
        self.done = true;
        Some(Err(WorkloadError::Line { file: self.name.clone(), line: self.line, message }))
    }

    /// The next line without its end, reading at most [`MAX_LINE_BYTES`] + 1 bytes of it.
    fn read_line(&mut self) -> Option<io::Result<Result<String, usize>>> {
        let mut bytes = Vec::new();
        let limit = MAX_LINE_BYTES as u64 + 1;
        match (&mut self.reader).take(limit).read_until(b'\n', &mut bytes) {
            Ok(0) => None,
            Ok(_) if bytes.last() == Some(&b'\n') || bytes.len() <= MAX_LINE_BYTES => {
                if bytes.last() == Some(&b'\n') {
                    bytes.pop();
                }
                let text = String::from_utf8(bytes)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"));
                Some(text.map(Ok))
            }
            Ok(n) => Some(Ok(Err(n))),
            Err(e) => Some(Err(e)),
        }
    }

    /// The next record's text: comment lines become header entries and blank lines are skipped on the way.
    pub fn next_record(&mut self) -> Option<Result<String, WorkloadError>> {
        while !self.done {
            let read = self.read_line()?;
            self.line += 1;
            let text = match read {
                Ok(Ok(text)) => text,
                Ok(Err(_)) => {
                    return self.fail(format!("a line longer than {} KiB: is this a trace?", MAX_LINE_BYTES >> 10));
                }
                Err(source) => {
                    self.done = true;
                    let context = format!("{}:{}", self.name, self.line);
                    let cause = if source.kind() == io::ErrorKind::InvalidData {
                        io::Error::new(io::ErrorKind::InvalidData, format!("not text ({source}): is this a trace?"))
                    } else {
                        source
                    };
                    return Some(Err(WorkloadError::Io { context, cause }));
                }
            };
            // A byte-order mark some editors put first is not part of the text.
            let trimmed = if self.line == 1 { text.trim_start_matches('\u{feff}') } else { &text }.trim();
            if let Some(comment) = trimmed.strip_prefix(self.comments) {
                if self.header.len() == MAX_HEADER_LINES {
                    return self.fail(format!("more than {MAX_HEADER_LINES} header lines: is this a trace?"));
                }
                self.header.push(header_entry(comment));
                continue;
            }
            if !trimmed.is_empty() {
                return Some(Ok(trimmed.to_string()));
            }
        }
        None
    }

    /// The next job: `parse(file, line, text)` turns a record into a job, `None` to skip it.
    pub fn next_job(
        &mut self,
        mut parse: impl FnMut(&str, u64, &str) -> Result<Option<WorkloadJob>, WorkloadError>,
    ) -> Option<Result<WorkloadJob, WorkloadError>> {
        loop {
            let text = match self.next_record()? {
                Ok(text) => text,
                Err(e) => return Some(Err(e)),
            };
            match parse(&self.name, self.line, &text) {
                Ok(Some(_)) if self.jobs == MAX_JOBS => {
                    return self.fail(format!("more than {MAX_JOBS} jobs, the limit per workload"));
                }
                Ok(Some(job)) => {
                    self.jobs += 1;
                    return Some(Ok(job));
                }
                Ok(None) => {
                    self.skipped.count += 1;
                    self.skipped.first_line.get_or_insert(self.line);
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Opens a trace file, decompressing it on the fly when it is gzip (`.swf.gz`, `.gwf.gz`): gzip is recognised by
/// its first two bytes, whatever the file's name, so every reader takes both.
pub fn open(path: &Path) -> Result<Box<dyn BufRead>, WorkloadError> {
    let io = |cause| WorkloadError::Io { context: path.display().to_string(), cause };
    decompressed(BufReader::new(File::open(path).map_err(io)?)).map_err(io)
}

/// `reader`'s bytes, decompressed when they start as gzip does (what [`open`] does to a file's).
pub fn decompressed<R: BufRead + 'static>(mut reader: R) -> io::Result<Box<dyn BufRead>> {
    let start = reader.fill_buf()?;
    let other = [
        (&b"BZh"[..], "bzip2"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0][..], "xz"),
        (&[0x28, 0xb5, 0x2f, 0xfd][..], "zstd"),
        (&b"PK\x03\x04"[..], "zip"),
    ];
    if let Some((_, format)) = other.iter().find(|(magic, _)| start.starts_with(magic)) {
        let m = format!("compressed with {format}, which is not read: decompress it, or compress it with gzip");
        return Err(io::Error::new(io::ErrorKind::InvalidData, m));
    }
    let gzip = start.starts_with(&[0x1f, 0x8b]);
    // Several gzip members one after the other (as `cat a.gz b.gz` makes) are one stream.
    Ok(if gzip { Box::new(BufReader::new(MultiGzDecoder::new(reader))) } else { Box::new(reader) })
}

/// What a time field holds: [`MAX_TIME`] is 1e12 s (checked by a test below, as `expected` is a static string).
const TIME: &str = "a number of seconds from 0 to 1e12, or -1";
const TIME_WITHIN: &str = "a number of seconds from -1e12 to 1e12";

/// One job line being parsed: where it is, its fields, and the format's field names.
pub(crate) struct Fields<'a> {
    pub file: &'a str,
    pub line: u64,
    pub tokens: Vec<&'a str>,
    pub names: &'a [&'static str],
}

impl Fields<'_> {
    /// Error for field `i` (0-based).
    pub fn error(&self, i: usize, expected: &'static str) -> WorkloadError {
        WorkloadError::Field {
            file: self.file.to_string(),
            line: self.line,
            column: i + 1,
            field: self.names.get(i).copied().unwrap_or("extra column"),
            expected,
            found: self.tokens.get(i).copied().unwrap_or("").to_string(),
        }
    }

    /// The raw text of field `i`.
    pub fn text(&self, i: usize) -> &str {
        self.tokens.get(i).copied().unwrap_or("")
    }

    /// A finite number.
    pub fn number(&self, i: usize) -> Result<f64, WorkloadError> {
        match self.text(i).parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(i, "a number")),
        }
    }

    /// A time that may be negative (e.g. wait times of reservations), within ±[`MAX_TIME`]; −1 is unknown.
    pub fn signed_time(&self, i: usize) -> Result<Option<f64>, WorkloadError> {
        match self.number(i)? {
            -1.0 => Ok(None),
            v if v.abs() <= MAX_TIME => Ok(Some(v)),
            _ => Err(self.error(i, TIME_WITHIN)),
        }
    }

    /// A time or duration from 0 to [`MAX_TIME`]; −1 is unknown.
    pub fn time(&self, i: usize) -> Result<Option<f64>, WorkloadError> {
        match self.number(i)? {
            -1.0 => Ok(None),
            v if (0.0..=MAX_TIME).contains(&v) => Ok(Some(v)),
            _ => Err(self.error(i, TIME)),
        }
    }

    /// A non-negative quantity; −1 is unknown.
    pub fn quantity(&self, i: usize) -> Result<Option<f64>, WorkloadError> {
        match self.number(i)? {
            -1.0 => Ok(None),
            v if v >= 0.0 => Ok(Some(v)),
            _ => Err(self.error(i, "a non-negative number or -1")),
        }
    }

    /// A non-negative integer; −1 is unknown.
    pub fn integer(&self, i: usize) -> Result<Option<u64>, WorkloadError> {
        match self.number(i)? {
            -1.0 => Ok(None),
            v if v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64 => Ok(Some(v as u64)),
            _ => Err(self.error(i, "a non-negative integer or -1")),
        }
    }

    /// A non-negative integer below 2^32; −1 is unknown.
    pub fn small_integer(&self, i: usize) -> Result<Option<u32>, WorkloadError> {
        self.integer(i)?.map(|v| u32::try_from(v).map_err(|_| self.error(i, "an integer below 2^32"))).transpose()
    }

    /// Fields 1–11, common to SWF and GWF. `None` when the record cannot be simulated: unknown submit time, unknown
    /// runtime, no known positive processor count, or a runtime of 0 with no positive requested time, which asks
    /// for nothing to be held (cancelled jobs that never ran are logged like this).
    pub fn core(&self) -> Result<Option<WorkloadJob>, WorkloadError> {
        let id = self.integer(0)?.ok_or_else(|| self.error(0, "a job number >= 0"))?;
        let submit = self.time(1)?;
        let wait = self.signed_time(2)?;
        let runtime = self.time(3)?;
        let allocated = self.small_integer(4)?;
        let avg_cpu_time = self.quantity(5)?;
        let used_memory = self.quantity(6)?;
        let requested_pes = self.small_integer(7)?;
        let requested_time = self.time(8)?;
        let requested_memory = self.quantity(9)?;
        let status = match self.number(10)? {
            -1.0 => None,
            v if v.fract() == 0.0 => {
                Some(JobStatus::from_code(v as i64).ok_or_else(|| self.error(10, "a status code 0-5 or -1"))?)
            }
            _ => return Err(self.error(10, "a status code 0-5 or -1")),
        };
        // The allocated count is what ran; fall back to the request when it is unknown.
        let pes = allocated.filter(|&p| p > 0).or(requested_pes.filter(|&p| p > 0));
        let (Some(submit), Some(runtime), Some(pes)) = (submit, runtime, pes) else {
            return Ok(None);
        };
        if asks_for_nothing(runtime, requested_time) {
            return Ok(None);
        }
        Ok(Some(WorkloadJob {
            wait,
            avg_cpu_time,
            used_memory,
            requested_pes,
            requested_time,
            requested_memory,
            status,
            ..WorkloadJob::new(id, submit, runtime, pes)
        }))
    }
}

/// Whether a job of `runtime` with `requested` time asks for nothing to be held: a runtime of 0 with no positive
/// request (a job cancelled before it ran), which no scheduler can reserve for. Readers leave it out, counted.
pub fn asks_for_nothing(runtime: f64, requested: Option<f64>) -> bool {
    runtime == 0.0 && requested.is_none_or(|t| t <= 0.0)
}

/// Splits a header comment (without its `;` or `#`) into key and value.
///
/// `MaxProcs: 128` gives ("MaxProcs", "128"); text without a one-word key before a colon
/// is kept whole with an empty key.
fn header_entry(text: &str) -> (String, String) {
    let text = text.trim();
    if let Some((key, value)) = text.split_once(':') {
        let key = key.trim();
        let is_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if is_key {
            return (key.to_string(), value.trim().to_string());
        }
    }
    (String::new(), text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_fields_name_the_cap() {
        use agents::registry::limits::short;
        assert!(TIME.contains(&short(MAX_TIME)) && TIME_WITHIN.contains(&short(MAX_TIME)));
    }

    #[test]
    fn header_entries() {
        assert_eq!(header_entry(" MaxProcs: 128 "), ("MaxProcs".into(), "128".into()));
        assert_eq!(header_entry("Note: see http://x"), ("Note".into(), "see http://x".into()));
        assert_eq!(header_entry("free text: with colon"), (String::new(), "free text: with colon".into()));
        assert_eq!(header_entry(""), (String::new(), String::new()));
    }
}
