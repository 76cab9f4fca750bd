//! The message trace: one JSON line per delivered envelope, optionally filtered, and a reader for it.

use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{AgentId, Directory, Envelope, Message, SimError};

/// One line of the trace, as read back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord<M> {
    /// Delivery time \[s\].
    pub t: f64,
    /// Zero-delay round within the instant.
    pub round: u32,
    /// Sender's name (`env` for injected messages).
    pub from: String,
    /// Receiver's name.
    pub to: String,
    /// Message kind, `sub_protocol.variant`.
    pub kind: String,
    /// The message in its serde form.
    pub msg: M,
}

/// The same record, borrowed, for writing without copies.
#[derive(Serialize)]
struct RecordRef<'a, M> {
    t: f64,
    round: u32,
    from: &'a str,
    to: &'a str,
    kind: &'a str,
    msg: &'a M,
}

/// Which deliveries the trace keeps: those that involve one of `agents` (as sender or receiver) and whose kind
/// starts with one of `kinds` (`"job."`, `"lease.suspended"`). An empty list keeps everything.
#[derive(Clone, Debug, Default)]
pub struct TraceFilter {
    /// Agent names.
    pub agents: Vec<String>,
    /// Kind prefixes.
    pub kinds: Vec<String>,
}

/// Where the trace goes, with its filter resolved against the directory.
pub struct TraceSink {
    out: Box<dyn Write + Send>,
    filter: TraceFilter,
    agents: Option<Vec<bool>>,
    /// The current batch's lines, written once it is delivered: a timer cancelled by its agent before its turn in
    /// the batch is not delivered, and leaves no line.
    held: Vec<u8>,
    /// Each held line's sender, sequence number and end in `held`.
    lines: Vec<(AgentId, u64, usize)>,
}

impl TraceSink {
    /// A trace written to `out` (buffer it: every delivery is one write).
    pub fn new(out: Box<dyn Write + Send>, filter: TraceFilter) -> TraceSink {
        TraceSink { out, filter, agents: None, held: Vec::with_capacity(4096), lines: Vec::new() }
    }

    /// Resolves agent names once the directory is complete.
    pub(crate) fn resolve(&mut self, dir: &Directory) -> Result<(), SimError> {
        if self.filter.agents.is_empty() {
            return Ok(());
        }
        let mut keep = vec![false; dir.len()];
        let names: BTreeSet<&str> = self.filter.agents.iter().map(String::as_str).collect();
        for name in names {
            let id = dir.lookup(name).ok_or_else(|| SimError::NoSuchName { name: name.to_string() })?;
            keep[id.index()] = true;
        }
        self.agents = Some(keep);
        Ok(())
    }

    pub(crate) fn record<M: Message>(&mut self, dir: &Directory, env: &Envelope<M>) -> Result<(), SimError> {
        let kind = env.msg.kind();
        if let Some(keep) = &self.agents {
            let hit = |id: super::AgentId| keep.get(id.index()).copied().unwrap_or(false);
            if !hit(env.from()) && !hit(env.to) {
                return Ok(());
            }
        }
        if !self.filter.kinds.is_empty() && !self.filter.kinds.iter().any(|k| kind.starts_with(k.as_str())) {
            return Ok(());
        }
        let rec = RecordRef {
            t: env.at().secs(),
            round: env.key.round,
            from: dir.name(env.from()).unwrap_or("env"),
            to: dir.name(env.to).unwrap_or("?"),
            kind,
            msg: &env.msg,
        };
        serde_json::to_writer(&mut self.held, &rec).map_err(|e| SimError::Trace(e.to_string()))?;
        self.held.push(b'\n');
        self.lines.push((env.from(), env.key.seq, self.held.len()));
        Ok(())
    }

    /// Writes the batch's lines but those of the `skipped` envelopes (sender, sequence number).
    pub(crate) fn commit(&mut self, skipped: &[(AgentId, u64)]) -> Result<(), SimError> {
        let result = if skipped.is_empty() {
            self.out.write_all(&self.held)
        } else {
            let mut start = 0;
            let mut written = Ok(());
            for &(from, seq, end) in &self.lines {
                if written.is_ok() && !skipped.contains(&(from, seq)) {
                    written = self.out.write_all(&self.held[start..end]);
                }
                start = end;
            }
            written
        };
        self.held.clear();
        self.lines.clear();
        result.map_err(|e| SimError::Trace(e.to_string()))
    }

    pub(crate) fn flush(&mut self) -> Result<(), SimError> {
        self.out.flush().map_err(|e| SimError::Trace(e.to_string()))
    }
}

/// Reads a trace back; an unreadable line is an error naming its number.
pub fn read<M: DeserializeOwned>(input: impl BufRead) -> io::Result<Vec<TraceRecord<M>>> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let rec = serde_json::from_str(&line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("trace line {}: {e}", i + 1)))?;
        out.push(rec);
    }
    Ok(out)
}
