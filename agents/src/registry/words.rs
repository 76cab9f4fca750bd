//! serde's errors in a scenario's words, wherever a part of a scenario is read: the loader's tables, and the keys a
//! policy reads of its own (a pricing rule's).

use toml::{Table, Value};

use super::{Invalid, did_you_mean};

/// A serde error reworded for the user.
#[derive(Clone, Debug, PartialEq)]
pub struct Worded {
    /// The dotted key at fault: the missing key itself when one is missing.
    pub key: String,
    /// What is wrong, in the words of the scenario file (`unknown key`, `expected a number, found …`).
    pub message: String,
    /// "did you mean" the closest of the keys or values it expected.
    pub hint: Option<String>,
    /// Whether the error is about the key (unknown, missing) rather than its value.
    pub about_the_key: bool,
}

impl Worded {
    /// serde's `message` about the value at `path` (keys and array indices) of `root`.
    pub fn new(path: &[String], message: &str, root: &Table) -> Worded {
        let mut key = path.join(".");
        let mut message = message.to_string();
        // "missing field `x`" at a table: name the missing key itself.
        if let Some(field) = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
            key = if key.is_empty() { field.to_string() } else { format!("{key}.{field}") };
            message = "required key is missing".into();
        }
        let hint = hint_for(&message);
        let found = value_at(root, path).map(describe);
        let about_the_key = message.starts_with("unknown field") || message == "required key is missing";
        Worded { key, message: plain(&message, found), hint, about_the_key }
    }
}

impl From<Worded> for Invalid {
    fn from(w: Worded) -> Invalid {
        Invalid { key: w.key, message: w.message, hint: w.hint }
    }
}

/// Turns serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant ...") into a hint.
fn hint_for(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))?;
    let (word, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    did_you_mean(word, expected.iter().copied()).map(|m| format!("did you mean `{m}`?"))
}

/// serde's wording in a scenario's terms: "unknown key" rather than "unknown field", "unknown value" rather than
/// "unknown variant", TOML's and the schema's type names rather than Rust's (`a table`, not `struct RawProvider` or
/// `map`; `a number`, not `f64`), and "expected X, found Y" like the range checks rather than "invalid type: Y,
/// expected X". `found` describes the value at the error's key, when there is one.
fn plain(message: &str, found: Option<String>) -> String {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        return format!("unknown key {rest}");
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    let type_name = |s: &str| match s {
        "map" | "a map" => "a table".to_string(),
        "sequence" | "a sequence" => "an array".to_string(),
        "string only" => "a string".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".to_string(),
        s if s.starts_with("struct ") => "a table".to_string(),
        other => other.to_string(),
    };
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some((what, expected)) = message.strip_prefix(prefix).and_then(|r| r.split_once(", expected ")) {
            let found = match found {
                // The value as written, when serde could only say "unit variant" (an enum given a number).
                Some(f) if what == "unit variant" || prefix == "invalid length " => f,
                _ => type_name(what),
            };
            return format!("expected {}, found {found}", type_name(expected));
        }
    }
    message.to_string()
}

/// A value as an error message names what was found: `integer 3`, `string "x"`, `an array of 1 value(s)`.
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {s:?}"),
        Value::Integer(i) => format!("integer `{i}`"),
        Value::Float(x) => format!("floating point `{x}`"),
        Value::Boolean(b) => format!("boolean `{b}`"),
        Value::Datetime(d) => format!("date-time `{d}`"),
        Value::Array(a) => format!("an array of {} value(s)", a.len()),
        Value::Table(_) => "a table".into(),
    }
}

/// The value at a path of keys and array indices under `root`.
fn value_at<'a>(root: &'a Table, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut v = root.get(first)?;
    for part in rest {
        v = match v {
            Value::Table(t) => t.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let m = "unknown field `shceduler`, expected one of `pes`, `mips`, `scheduler`";
        assert_eq!(hint_for(m).as_deref(), Some("did you mean `scheduler`?"));
        assert_eq!(
            hint_for("unknown variant `eassy`, expected `fcfs` or `easy`").as_deref(),
            Some("did you mean `easy`?")
        );
    }

    #[test]
    fn words_serde_as_a_scenario_says_it() {
        let root: Table = toml::from_str("gain = \"high\"\nsignal = \"queu\"").unwrap();
        let w = Worded::new(&["gain".into()], "invalid type: string \"high\", expected f64", &root);
        assert_eq!((w.key.as_str(), w.message.as_str()), ("gain", "expected a number, found string \"high\""));
        let w = Worded::new(&["signal".into()], "unknown variant `queu`, expected `utilisation` or `queue`", &root);
        assert_eq!(w.message, "unknown value `queu`, expected `utilisation` or `queue`");
        assert_eq!(w.hint.as_deref(), Some("did you mean `queue`?"));
        let w = Worded::new(&[], "missing field `rule`", &root);
        assert_eq!((w.key.as_str(), w.message.as_str(), w.about_the_key), ("rule", "required key is missing", true));
    }
}
