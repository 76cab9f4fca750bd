//! Scenario errors: file, line and column, key path, what was expected, and a hint.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

/// A problem with a scenario, located as precisely as the source allows.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The file (scenario or profile).
    pub file: PathBuf,
    /// 1-based line and column, when known.
    pub at: Option<(usize, usize)>,
    /// Dotted key path (`providers.fast.pes`), when known.
    pub key: Option<String>,
    /// What is wrong: what was expected and what was found.
    pub message: String,
    /// How to fix it, when there is a likely fix.
    pub hint: Option<String>,
}

impl ScenarioError {
    /// An error about `file` as a whole.
    pub fn file(file: &Path, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: file.to_path_buf(), at: None, key: None, message: message.into(), hint: None }
    }

    /// An error at `key`, located with `spans` when the key is in the file.
    pub fn at_key(spans: &Spans, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: spans.file.clone(),
            at: spans.locate(key),
            key: Some(key.to_string()),
            message: message.into(),
            hint: None,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ScenarioError {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.at {
            write!(f, ":{line}:{col}")?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Where every key of a TOML file is, for errors found after parsing (types, ranges, references).
#[derive(Clone, Debug)]
pub struct Spans {
    file: PathBuf,
    line_starts: Vec<usize>,
    /// Dotted key, where the key is, where its value is.
    keys: Vec<(String, Range<usize>, Range<usize>)>,
}

impl Spans {
    /// Indexes `text` (already known to parse).
    pub fn index(file: &Path, text: &str) -> Spans {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut keys = Vec::new();
        if let Ok(doc) = DeTable::parse(text) {
            walk_table(doc.get_ref(), "", &mut keys);
        }
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        Spans { file: file.to_path_buf(), line_starts, keys }
    }

    /// The file indexed.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Line and column of `key`, or of its nearest ancestor present in the file.
    pub fn locate(&self, key: &str) -> Option<(usize, usize)> {
        let mut k = key;
        loop {
            if let Ok(i) = self.keys.binary_search_by(|(p, _, _)| p.as_str().cmp(k)) {
                return Some(self.line_col(self.keys[i].1.start));
            }
            k = &k[..k.rfind('.')?];
        }
    }

    /// Line and column of the value of `key` (for an error about the value: its type or range), or where
    /// [`Spans::locate`] puts the key when it is not in the file.
    pub fn locate_value(&self, key: &str) -> Option<(usize, usize)> {
        match self.keys.binary_search_by(|(p, _, _)| p.as_str().cmp(key)) {
            Ok(i) => Some(self.line_col(self.keys[i].2.start)),
            Err(_) => self.locate(key),
        }
    }

    /// Line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        (line, offset - self.line_starts[line - 1] + 1)
    }
}

type KeySpans = Vec<(String, Range<usize>, Range<usize>)>;

fn walk_table(t: &DeTable<'_>, prefix: &str, out: &mut KeySpans) {
    for (k, v) in t.iter() {
        let path = if prefix.is_empty() { k.get_ref().to_string() } else { format!("{prefix}.{}", k.get_ref()) };
        out.push((path.clone(), k.span(), v.span()));
        walk_value(v.get_ref(), &path, out);
    }
}

fn walk_value(v: &DeValue<'_>, path: &str, out: &mut KeySpans) {
    match v {
        DeValue::Table(t) => walk_table(t, path, out),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}.{i}");
                out.push((p.clone(), item.span(), item.span()));
                walk_value(item.get_ref(), &p, out);
            }
        }
        _ => {}
    }
}

pub use agents::registry::did_you_mean;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_nested_keys_and_falls_back_to_parents() {
        let text = "seed = 1\n\n[providers.fast]\npes = 64\nscheduler = \"easy\"\n";
        let s = Spans::index(Path::new("x.toml"), text);
        assert_eq!(s.locate("seed"), Some((1, 1)));
        assert_eq!(s.locate("providers.fast.pes"), Some((4, 1)));
        assert_eq!(s.locate("providers.fast.scheduler"), Some((5, 1)));
        assert_eq!(s.locate("providers.fast.mips"), Some((3, 12)), "absent key: its table");
        assert_eq!(s.locate_value("providers.fast.pes"), Some((4, 7)), "the value, for type and range errors");
        assert_eq!(s.locate_value("providers.fast.mips"), Some((3, 12)));
        assert_eq!(s.locate("nothing"), None);
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("pess", ["pes", "mips", "price"]), Some("pes"));
        assert_eq!(did_you_mean("scheduler", ["pes"]), None);
    }
}
