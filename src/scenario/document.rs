//! The scenario file as a TOML tree: profiles merged in, `--set`, `[quick]` and sweep assignments applied, then
//! deserialised with every error located in the file it came from.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agents::registry::Registry;
use agents::registry::limits::MAX_FILE_BYTES;
use agents::registry::words::Worded;
use serde::de::DeserializeOwned;
use toml::{Table, Value};

use super::error::{ScenarioError, Spans};

/// A scenario file parsed into a TOML tree, with the index of where each key is.
#[derive(Clone, Debug)]
pub struct Document {
    /// The scenario file.
    pub path: PathBuf,
    /// The tree, profiles merged.
    pub table: Table,
    /// Where keys are in the scenario file (shared by the copies made for sweep points).
    pub spans: Arc<Spans>,
}

impl Document {
    /// Reads and parses `path`, merging the profiles its agent groups (the tables of `registry`'s kinds) name.
    pub fn load(path: &Path, registry: &Registry) -> Result<Document, ScenarioError> {
        let text = read_text(path).map_err(|e| ScenarioError::file(path, format!("cannot read the scenario: {e}")))?;
        Document::parse(path, &text, registry)
    }

    /// Parses `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str, registry: &Registry) -> Result<Document, ScenarioError> {
        let (table, spans) = parse_table(path, text)?;
        let mut doc = Document { path: path.to_path_buf(), table, spans: Arc::new(spans) };
        doc.merge_profiles(registry)?;
        Ok(doc)
    }

    /// Replaces each group's `profile = "file"` by the file's keys, the group's own keys taking precedence.
    fn merge_profiles(&mut self, registry: &Registry) -> Result<(), ScenarioError> {
        let base = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for section in registry.kinds().iter().map(|k| k.table()) {
            let Some(Value::Table(groups)) = self.table.get_mut(section) else { continue };
            for (name, group) in groups.iter_mut() {
                let Value::Table(group) = group else { continue };
                let key = format!("{section}.{name}.profile");
                let Some(profile) = group.remove("profile") else { continue };
                let Value::String(file) = profile else {
                    return Err(ScenarioError::at_key(&self.spans, &key, "expected a file name (string)"));
                };
                let path = base.join(&file);
                let text = read_text(&path).map_err(|e| {
                    ScenarioError::at_key(&self.spans, &key, format!("cannot read profile `{}`: {e}", path.display()))
                })?;
                let (defaults, spans) = parse_table(&path, &text)?;
                // One level only: a profile naming a profile (itself, or a cycle) would be left unmerged.
                if defaults.contains_key("profile") {
                    let m =
                        format!("a profile cannot name another profile (named by `{key}` of {})", self.path.display());
                    let e = ScenarioError::at_key(&spans, "profile", m);
                    return Err(e.hint("copy the keys of the profile it names into it"));
                }
                let own = std::mem::replace(group, defaults);
                merge(group, own);
            }
        }
        Ok(())
    }

    /// Sets the dotted `key` to `value` (`[quick]`, `[sweep]`). Every table on the way must exist, so a misspelt
    /// group in the file is refused; the last key may be new (whether it is a known key is checked when the tree is
    /// deserialised).
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), String> {
        self.assign(key, value, false)
    }

    /// Sets the dotted `key` to `value` as `--set` does, adding the tables on the way that do not exist (a new
    /// group): every key is checked when the tree is deserialised, like the file's own.
    pub fn add(&mut self, key: &str, value: Value) -> Result<(), String> {
        self.assign(key, value, true)
    }

    fn assign(&mut self, key: &str, value: Value, add_tables: bool) -> Result<(), String> {
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(format!("`{key}` is not a dotted key"));
        }
        if parts.last() == Some(&"*") {
            return Err(format!("`{key}`: `*` stands for every table at its place, not for a key"));
        }
        assign_at(&mut self.table, &parts, 0, value, add_tables)
    }

    /// Deserialises the tree; a type, range or unknown-key error names the key and its place in the file.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, ScenarioError> {
        self.deserialize_table(self.table.clone())
    }

    /// Deserialises `table`, a part of the tree, as [`deserialize`](Self::deserialize) does the whole.
    pub fn deserialize_table<T: DeserializeOwned>(&self, table: Table) -> Result<T, ScenarioError> {
        agents::registry::parse(Value::Table(table)).map_err(|e| self.error_at(e.path, e.message))
    }

    /// A deserialisation error at `path` (keys and array indices from the top of the tree), located and worded for
    /// the user.
    pub fn error_at(&self, path: Vec<String>, message: String) -> ScenarioError {
        let w = Worded::new(&path, &message, &self.table);
        let mut err = ScenarioError::at_key(&self.spans, &w.key, w.message);
        if !w.about_the_key {
            err.at = self.spans.locate_value(&w.key);
        }
        if w.key.is_empty() {
            err.key = None;
        }
        if let Some(h) = w.hint {
            err = err.hint(h);
        }
        err
    }
}

/// Whether table name `name` matches `pattern`, in which one `*` stands for any run of characters (`local-*`).
pub(super) fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail),
        None => pattern == name,
    }
}

/// Sets `parts[depth..]` under `table` to `value`; a part `*` stands for every table at its place (`datacentres.*.dvs`
/// sets `dvs` in every data centre group), `local-*` for those whose name starts with `local-`; it must match at
/// least one.
fn assign_at(table: &mut Table, parts: &[&str], depth: usize, value: Value, add_tables: bool) -> Result<(), String> {
    let (last, path) = parts.split_last().ok_or("empty key")?;
    let mut table = table;
    for (i, part) in path.iter().enumerate().skip(depth) {
        if part.contains('*') {
            let children: Vec<&mut Table> =
                table.iter_mut().filter(|(k, _)| glob(part, k)).filter_map(|(_, v)| v.as_table_mut()).collect();
            if children.is_empty() {
                return Err(format!("no table in the scenario matches `{}`", parts[..=i].join(".")));
            }
            for child in children {
                assign_at(child, parts, i + 1, value.clone(), add_tables)?;
            }
            return Ok(());
        }
        if !add_tables && !table.contains_key(*part) {
            let known: Vec<&str> = table.keys().map(String::as_str).collect();
            let mut msg = format!("no key `{}` in the scenario", parts[..=i].join("."));
            if let Some(m) = super::error::did_you_mean(part, known) {
                msg.push_str(&format!(" (did you mean `{m}`?)"));
            }
            return Err(msg);
        }
        table = match table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new())) {
            Value::Table(t) => t,
            _ => return Err(format!("`{}` is not a table", parts[..=i].join("."))),
        };
    }
    table.insert(last.to_string(), value);
    Ok(())
}

/// The text of a scenario or profile file, refused beyond [`MAX_FILE_BYTES`] before more is read.
fn read_text(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than the limit of {} MiB", MAX_FILE_BYTES >> 20));
    }
    Ok(text)
}

/// Parses TOML text into a table and its key index; a syntax error is located by line and column.
fn parse_table(path: &Path, text: &str) -> Result<(Table, Spans), ScenarioError> {
    let spans = Spans::index(path, text);
    match text.parse::<Table>() {
        Ok(t) => Ok((t, spans)),
        Err(e) => {
            let message = e.message().trim_end();
            // The parser's words for two common slips, in the user's.
            let message = if message.contains("as i128") || message.contains("value was too large") {
                "an integer beyond the largest TOML holds (2^63 − 1 = 9223372036854775807)".to_string()
            } else {
                message.to_string()
            };
            let mut err = ScenarioError::file(path, format!("invalid TOML: {message}"));
            err.at = e.span().map(|s| spans.line_col(s.start));
            if message.contains("invalid unquoted key") {
                err = err.hint(
                    "a key of other characters than ASCII letters, digits, `-` and `_` is quoted: [providers.\"café\"]",
                );
            }
            Err(err)
        }
    }
}

/// Deep merge: `over`'s keys replace `base`'s, tables merge key by key.
fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parses a `--set` value: TOML syntax when it is a TOML value (`64`, `0.5`, `"easy"`, `[1, 2]`, `true`), else a
/// bare string (`easy`).
pub fn parse_value(text: &str) -> Value {
    let doc = format!("v = {text}");
    match doc.parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(text.to_string())),
        Err(_) => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_creates_leaves_add_creates_tables_neither_goes_through_values() {
        let mut d = Document::parse(Path::new("t.toml"), "[providers.fast]\npes = 4\n", &Registry::standard()).unwrap();
        d.set("providers.fast.pes", Value::Integer(8)).unwrap();
        d.set("providers.fast.mips", Value::Float(2.0)).unwrap();
        let e = d.set("providers.fsat.pes", Value::Integer(1)).unwrap_err();
        assert_eq!(e, "no key `providers.fsat` in the scenario (did you mean `fast`?)");
        d.add("providers.slow.pes", Value::Integer(1)).unwrap();
        assert_eq!(d.table["providers"]["fast"]["pes"].as_integer(), Some(8));
        assert_eq!(d.table["providers"]["slow"]["pes"].as_integer(), Some(1));
        assert_eq!(
            d.set("providers.fast.pes.x", Value::Integer(1)).unwrap_err(),
            "`providers.fast.pes` is not a table"
        );
        assert_eq!(d.add("providers..pes", Value::Integer(1)).unwrap_err(), "`providers..pes` is not a dotted key");
    }

    #[test]
    fn a_star_sets_the_key_in_every_table_at_its_place() {
        let text = "[providers.a]\npes = 4\n[providers.b]\npes = 8\n";
        let mut d = Document::parse(Path::new("t.toml"), text, &Registry::standard()).unwrap();
        d.set("providers.*.price", Value::Float(2.0)).unwrap();
        assert_eq!(d.table["providers"]["a"]["price"].as_float(), Some(2.0));
        assert_eq!(d.table["providers"]["b"]["price"].as_float(), Some(2.0));
        assert_eq!(d.table["providers"]["b"]["pes"].as_integer(), Some(8));
        // A prefix and a star: only the tables whose name starts with it.
        d.set("providers.b*.pes", Value::Integer(16)).unwrap();
        assert_eq!(d.table["providers"]["a"]["pes"].as_integer(), Some(4));
        assert_eq!(d.table["providers"]["b"]["pes"].as_integer(), Some(16));
        assert_eq!(d.set("gateways.*.x", Value::Integer(1)).unwrap_err(), "no key `gateways` in the scenario");
        assert_eq!(
            d.set("providers.a.*.x", Value::Integer(1)).unwrap_err(),
            "no table in the scenario matches `providers.a.*`"
        );
        assert!(d.set("providers.*", Value::Integer(1)).unwrap_err().contains("not for a key"));
        // A `*` inside a name matches the names around it.
        d.set("providers.a*.pes", Value::Integer(2)).unwrap();
        assert_eq!(d.table["providers"]["a"]["pes"].as_integer(), Some(2));
        assert_eq!(d.table["providers"]["b"]["pes"].as_integer(), Some(16));
        assert_eq!(
            d.set("providers.c*.pes", Value::Integer(1)).unwrap_err(),
            "no table in the scenario matches `providers.c*`"
        );
    }

    #[test]
    fn values_parse_as_toml_or_bare_strings() {
        assert_eq!(parse_value("64"), Value::Integer(64));
        assert_eq!(parse_value("0.5"), Value::Float(0.5));
        assert_eq!(parse_value("easy"), Value::String("easy".into()));
        assert_eq!(parse_value("\"a b\""), Value::String("a b".into()));
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let e = Document::parse(Path::new("bad.toml"), "seed = 1\npes = = 3\n", &Registry::standard()).unwrap_err();
        assert_eq!(e.at.map(|a| a.0), Some(2));
        assert!(e.to_string().starts_with("bad.toml:2:"), "{e}");
    }
}
