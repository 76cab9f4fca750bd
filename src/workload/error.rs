//! Errors of the workload readers, writers and generators.

use thiserror::Error;

/// Everything that can go wrong while reading, writing or generating a workload.
///
/// Parse errors carry the input name, the 1-based line number, the field name as the
/// format definition spells it, and the offending text, so a user can fix the trace.
#[derive(Debug, Error)]
pub enum WorkloadError {
    /// A field could not be interpreted.
    #[error("{file}:{line}: field {column} ({field}): expected {expected}, found {found:?}")]
    Field {
        /// Name of the input (usually its path).
        file: String,
        /// 1-based line number.
        line: u64,
        /// 1-based column (field number in the format definition).
        column: usize,
        /// Field name as in the SWF/GWF definition.
        field: &'static str,
        /// What the field must contain.
        expected: &'static str,
        /// The text that was found.
        found: String,
    },
    /// A job line has too few whitespace-separated fields.
    #[error("{file}:{line}: expected {expected} fields, found {found}")]
    FieldCount {
        /// Name of the input.
        file: String,
        /// 1-based line number.
        line: u64,
        /// Required number of fields, as text (e.g. "18" or "29 or 30").
        expected: &'static str,
        /// Number of fields on the line.
        found: usize,
    },
    /// A line cannot be a record of the trace (too long, too many), which ends the reading.
    #[error("{file}:{line}: {message}")]
    Line {
        /// Name of the input.
        file: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed.
    #[error("{context}: {cause}")]
    Io {
        /// Input name and line, or what was being written.
        context: String,
        /// The underlying error, in the message (not a `source`, which would print it twice).
        cause: std::io::Error,
    },
    /// A model or transformation parameter is out of its domain.
    #[error("invalid parameter {name}: {reason}")]
    Parameter {
        /// Parameter name, as in the source study where possible.
        name: String,
        /// Why it is invalid.
        reason: String,
    },
}

impl WorkloadError {
    /// Shorthand for [`WorkloadError::Parameter`].
    pub(crate) fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        WorkloadError::Parameter { name: name.into(), reason: reason.into() }
    }
}
