//! Fuzzing of every input parser: the scenario loader (`Study`, profiles and sweeps included), the SWF, GWF and
//! CSV readers (gzip too), the `--set` parser (`parse_value`, `Document::set` and `add`) and the shard manifests
//! that `merge` reads (`shard.json`).
//!
//! A seeded mutator starts from the repository's own inputs (the shipped scenarios, the fixtures, the broken
//! scenarios) and changes them line-, token- and byte-wise with a dictionary of hostile values (huge, negative,
//! non-finite numbers, empty strings, stray brackets, `*` and dots in keys, NUL, BOM, CR). Every parser must return
//! `Ok` or an error for each input, never panic.
//!
//! - `cargo test --test fuzz` replays the corpus under `tests/corpus/<parser>/` (every input that once found a bug,
//!   and a small seed set) and fuzzes a few hundred inputs per parser, so the driver cannot rot.
//! - `cargo test --release --test fuzz -- --ignored --nocapture` is the dedicated run: `FUZZ_INPUTS` inputs per
//!   parser (default 10⁶) from `FUZZ_SEED` (default 1); a panicking input is written to the corpus directory and
//!   the run fails at the end with the count.
//!
//! `cargo fuzz` would need a nightly compiler; this driver runs on stable and in CI.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agents::registry::Registry;
use gridmarket::runner::shard;
use gridmarket::scenario::{Document, LoadOptions, Study, parse_value};
use gridmarket::workload::{csv, decompressed, gwf, swf};

/// The parsers under test, each a directory of the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parser {
    Scenario,
    Swf,
    Gwf,
    Csv,
    Set,
    Shard,
}

impl Parser {
    const ALL: [Parser; 6] = [Parser::Scenario, Parser::Swf, Parser::Gwf, Parser::Csv, Parser::Set, Parser::Shard];

    fn name(self) -> &'static str {
        match self {
            Parser::Scenario => "scenario",
            Parser::Swf => "swf",
            Parser::Gwf => "gwf",
            Parser::Csv => "csv",
            Parser::Set => "set",
            Parser::Shard => "shard",
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir(p: Parser) -> PathBuf {
    root().join("tests/corpus").join(p.name())
}

/// splitmix64: a tiny seeded generator, so the driver's inputs depend only on its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values that break parsers: limits of every integer width, non-finite and subnormal floats, empty and
/// unterminated strings, TOML punctuation, key wildcards, control and multi-byte characters.
const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "-0",
    "1",
    "2",
    "-2",
    "0.0",
    "-0.0",
    "0.5",
    "1e308",
    "1e309",
    "-1e309",
    "1e-320",
    "1e12",
    "1e13",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "+inf",
    "-nan",
    "4294967295",
    "4294967296",
    "-4294967297",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1_000",
    "0x10",
    "0o7",
    "0b1",
    "1979-05-27T07:32:00Z",
    "07:32:00",
    "1979-05-27",
    "true",
    "false",
    "\"\"",
    "\"x\"",
    "''",
    "\"",
    "'",
    "\"\"\"",
    "[]",
    "[1, 2]",
    "[[]]",
    "{}",
    "{ a = 1 }",
    "[",
    "]",
    "{",
    "}",
    "[[x]]",
    "[a.b]",
    "[sweep]",
    "[quick]",
    "[[expect]]",
    "[[check]]",
    "[[chart]]",
    "=",
    ".",
    "..",
    "*",
    "a*",
    "*.*",
    ",",
    ";",
    "#",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\u{0}",
    "\u{feff}",
    "é",
    "💥",
    "\\",
    "\\u0000",
    "-",
    "+",
    "e",
    "E",
    "1e",
    ".5",
    "5.",
    "00",
    "-00",
    "999999999999999999999999999999",
    "1.7976931348623157e308",
    "2.2250738585072014e-308",
];

/// Keys and words of the seeds, for structure-aware replacements: a mutant then mixes real keys and values.
fn words(seeds: &[Seed]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in seeds {
        for w in String::from_utf8_lossy(&s.bytes).split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c))) {
            if !w.is_empty() && w.len() < 40 && !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
    }
    out.sort();
    out
}

/// An input to mutate, and where it lives (a scenario's profiles and traces are found beside it).
#[derive(Clone)]
struct Seed {
    path: PathBuf,
    bytes: Vec<u8>,
}

/// Files under `dirs` (relative to the repository) whose name ends with one of `exts`, sorted.
fn files(dirs: &[&str], exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, exts, out);
            } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(&root().join(d), exts, &mut out);
    }
    out.sort();
    out
}

fn seeds(p: Parser) -> Vec<Seed> {
    let paths = match p {
        // `--set` mutates keys and values applied to the scenarios.
        Parser::Scenario | Parser::Set => files(&["scenarios", "tests/fixtures", "tests/scenarios"], &[".toml"]),
        Parser::Swf => files(&["tests/fixtures", "tests/scenarios", "scenarios"], &[".swf", ".swf.gz"]),
        Parser::Gwf => files(&["tests/fixtures", "tests/scenarios", "scenarios"], &[".gwf", ".gwf.gz"]),
        Parser::Csv => files(&["tests/fixtures", "tests/scenarios", "scenarios"], &[".csv"]),
        // Shards of tests/fixtures/hand.toml, a study cheap to load: 1/1 (merges) and 1/2 (a run missing).
        Parser::Shard => files(&["tests/fixtures/shard"], &[".json"]),
    };
    let mut out: Vec<Seed> = paths
        .into_iter()
        // Decompressed: the mutants are compressed again (see `Fuzzer::input`), so the text is what changes.
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            let mut text = Vec::new();
            let mut r = decompressed(Cursor::new(bytes)).unwrap();
            std::io::Read::read_to_end(&mut r, &mut text).unwrap();
            Seed { path, bytes: text }
        })
        .collect();
    assert!(!out.is_empty(), "no seed for {p:?}");
    // Cheap seeds only: a scenario generating a Lublin workload when it is checked (seconds per sweep) or a large
    // trace would slow every one of its mutants a thousandfold; their keys are those of the others.
    out.retain(|s| s.bytes.len() < 64 << 10 && !String::from_utf8_lossy(&s.bytes).contains("\"lublin\""));
    out
}

/// Mutates seeds into inputs.
struct Fuzzer {
    rng: Rng,
    seeds: Vec<Seed>,
    words: Vec<String>,
    /// The dotted keys of each `--set` seed, read once.
    keys: HashMap<PathBuf, Vec<String>>,
}

impl Fuzzer {
    fn new(p: Parser, seed: u64) -> Self {
        let seeds = seeds(p);
        let words = words(&seeds);
        Fuzzer { rng: Rng(seed ^ (p as u64).wrapping_mul(0x1234_5678_9abc_def1)), seeds, words, keys: HashMap::new() }
    }

    /// A token: a hostile value, a word of the seeds, or a random number.
    fn token(&mut self) -> String {
        match self.rng.below(4) {
            0 | 1 => self.rng.pick(HOSTILE).to_string(),
            2 => self.rng.pick(&self.words).clone(),
            _ => {
                let n = self.rng.next() >> self.rng.below(64);
                if self.rng.below(2) == 0 { format!("-{n}") } else { format!("{n}.{}", self.rng.below(1000)) }
            }
        }
    }

    /// 1 to 4 mutations of a random seed; the seed's path with it.
    fn mutant(&mut self) -> (PathBuf, Vec<u8>) {
        let seed = self.rng.pick(&self.seeds).clone();
        let mut b = seed.bytes;
        for _ in 0..1 + self.rng.below(4) {
            b = self.mutate(b);
        }
        (seed.path, b)
    }

    fn mutate(&mut self, mut b: Vec<u8>) -> Vec<u8> {
        let lines = |b: &[u8]| b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect::<Vec<_>>();
        let join = |ls: Vec<Vec<u8>>| ls.join(&b'\n');
        match self.rng.below(10) {
            // Replace a token (a run between separators) by another.
            0..=2 => {
                let seps = |c: &u8| b" \t\n=,[]{}\"'".contains(c);
                let starts: Vec<usize> =
                    (0..b.len()).filter(|&i| !seps(&b[i]) && (i == 0 || seps(&b[i - 1]))).collect();
                if starts.is_empty() {
                    return self.token().into_bytes();
                }
                let s = *self.rng.pick(&starts);
                let e = (s..b.len()).find(|&i| seps(&b[i])).unwrap_or(b.len());
                let t = self.token();
                b.splice(s..e, t.into_bytes());
                b
            }
            // Insert a token anywhere.
            3 => {
                let at = self.rng.below(b.len() + 1);
                let t = self.token();
                b.splice(at..at, t.into_bytes());
                b
            }
            // Delete a range.
            4 if !b.is_empty() => {
                let s = self.rng.below(b.len());
                let e = (s + 1 + self.rng.below(16)).min(b.len());
                b.drain(s..e);
                b
            }
            // Duplicate, delete or swap lines.
            5 => {
                let mut ls = lines(&b);
                let i = self.rng.below(ls.len());
                let l = ls[i].clone();
                ls.insert(self.rng.below(ls.len() + 1), l);
                join(ls)
            }
            6 => {
                let mut ls = lines(&b);
                ls.remove(self.rng.below(ls.len()));
                join(ls)
            }
            7 => {
                let mut ls = lines(&b);
                let (i, j) = (self.rng.below(ls.len()), self.rng.below(ls.len()));
                ls.swap(i, j);
                join(ls)
            }
            // A line of another seed (a table header, a key of another scenario).
            8 => {
                let other = lines(&self.rng.pick(&self.seeds).bytes.clone());
                let l = self.rng.pick(&other).clone();
                let mut ls = lines(&b);
                ls.insert(self.rng.below(ls.len() + 1), l);
                join(ls)
            }
            // A random byte.
            _ if !b.is_empty() => {
                let i = self.rng.below(b.len());
                b[i] = self.rng.next() as u8;
                b
            }
            _ => self.token().into_bytes(),
        }
    }

    /// The next input for `p`, in the corpus's file format (see [`run`]).
    fn input(&mut self, p: Parser) -> (PathBuf, Vec<u8>) {
        let (path, mut b) = self.mutant();
        match p {
            // Some trace mutants go through gzip, a few of those with their compressed bytes damaged.
            Parser::Swf | Parser::Gwf | Parser::Csv if self.rng.below(8) == 0 => {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(&b).unwrap();
                b = gz.finish().unwrap();
                if self.rng.below(2) == 0 {
                    let i = 2 + self.rng.below(b.len() - 2);
                    b[i] = self.rng.next() as u8;
                }
            }
            // `--set KEY=VALUE` on the seed scenario: a key of its tree or a mutant of one, any value.
            Parser::Set => {
                let keys = self.keys.entry(path.clone()).or_insert_with(|| keys(&path));
                let mut key = keys[self.rng.below(keys.len())].clone().into_bytes();
                if self.rng.below(2) == 0 {
                    key = self.mutate(key);
                }
                let mut value = self.token().into_bytes();
                if self.rng.below(3) == 0 {
                    value = self.mutate(value);
                }
                b = [key, b"\n".to_vec(), value].concat();
            }
            _ => {}
        }
        (path, b)
    }
}

/// The dotted keys of the scenario at `path`, with two fixed ones (one with a `*`).
fn keys(path: &Path) -> Vec<String> {
    fn walk(prefix: &str, t: &toml::Table, out: &mut Vec<String>) {
        for (k, v) in t {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            if let toml::Value::Table(sub) = v {
                walk(&key, sub, out);
            }
            out.push(key);
        }
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = vec!["seed".to_string(), "providers.*.pes".to_string()];
    if let Ok(t) = text.parse::<toml::Table>() {
        walk("", &t, &mut out);
    }
    out
}

/// Runs one input through parser `p`; errors are fine, a panic is the bug. `whole`: a `--set` input always goes
/// through a whole load (the corpus), not one in 8 (the fuzz loop).
fn run(p: Parser, path: &Path, input: &[u8], registry: &Registry, whole: bool) {
    let name = path.display().to_string();
    match p {
        Parser::Scenario => {
            let text = String::from_utf8_lossy(input);
            if let Ok(doc) = Document::parse(path, &text, registry) {
                let quick = input.len().is_multiple_of(2);
                let _ =
                    Study::from_document(doc, &LoadOptions { registry: registry.clone(), quick, ..Default::default() });
            }
        }
        Parser::Swf => {
            if let Ok(r) = decompressed(Cursor::new(input.to_vec())) {
                let _ = swf::read_swf(r, &name);
            }
        }
        Parser::Gwf => {
            if let Ok(r) = decompressed(Cursor::new(input.to_vec())) {
                let _ = gwf::read_gwf(r, &name);
            }
        }
        Parser::Csv => {
            if let Ok(r) = decompressed(Cursor::new(input.to_vec())) {
                let _ = csv::read_csv(r, &name);
            }
        }
        Parser::Set => {
            let text = String::from_utf8_lossy(input);
            let (key, value) = text.split_once('\n').unwrap_or((&text, ""));
            let v = parse_value(value);
            let Some(base) = loaded(path, registry) else { return };
            let _ = base.clone().set(key, v.clone());
            let mut doc = base.clone();
            // A whole load (with its traces) for one input in 8 keeps the run's length in bounds.
            if doc.add(key, v).is_ok() && (whole || input.len().is_multiple_of(8)) {
                // As `--set` does: the tree with the value is checked as the file's own would be.
                let opts = LoadOptions {
                    registry: registry.clone(),
                    set: vec![(key.into(), value.into())],
                    ..Default::default()
                };
                let _ = Study::from_document(base, &opts);
            }
        }
        // A merge of the one shard: its manifest read, checked against the scenario it names (loaded again) and,
        // when it is whole, summarised; nothing is written.
        Parser::Shard => {
            let _ = shard::merge_manifests(&[(PathBuf::from("fuzzed"), input.to_vec())], &Default::default());
        }
    }
}

/// The scenario at `path` parsed, once per thread (a `--set` run applies every input to one of a few files).
fn loaded(path: &Path, registry: &Registry) -> Option<Document> {
    thread_local! {
        static DOCS: RefCell<HashMap<PathBuf, Option<Document>>> = RefCell::new(HashMap::new());
    }
    DOCS.with_borrow_mut(|docs| {
        docs.entry(path.to_path_buf()).or_insert_with(|| Document::load(path, registry).ok()).clone()
    })
}

/// A corpus file: a scenario or trace as is, after a first line `# seed: PATH` naming where it is read from (so
/// relative profiles and traces resolve); a `--set` input as `PATH\nKEY\nVALUE`.
fn corpus_entry(p: Parser, path: &Path, input: &[u8]) -> Vec<u8> {
    let rel = path.strip_prefix(root()).unwrap_or(path).display().to_string();
    match p {
        Parser::Set => [format!("{rel}\n").into_bytes(), input.to_vec()].concat(),
        _ => [format!("# seed: {rel}\n").into_bytes(), input.to_vec()].concat(),
    }
}

/// The path and input of a corpus file.
fn parse_entry(p: Parser, file: &[u8]) -> (PathBuf, Vec<u8>) {
    let nl = file.iter().position(|&c| c == b'\n').unwrap_or(file.len());
    let first = String::from_utf8_lossy(&file[..nl]).into_owned();
    let rest = file.get(nl + 1..).unwrap_or_default().to_vec();
    match p {
        Parser::Set => (root().join(first), rest),
        _ => match first.strip_prefix("# seed: ") {
            Some(rel) => (root().join(rel), rest),
            None => (root().join("tests/corpus"), file.to_vec()),
        },
    }
}

/// The outcome of a fuzz run of one parser.
struct Outcome {
    inputs: u64,
    panics: Vec<(String, PathBuf)>,
}

/// Fuzzes `p` with `n` inputs from `seed`; a panicking input is written under `save` when given.
fn fuzz(p: Parser, n: u64, seed: u64, save: Option<&Path>) -> Outcome {
    let registry = Registry::standard();
    let mut f = Fuzzer::new(p, seed);
    // Panics of this thread are recorded quietly; another test's still reach the previous hook.
    let last = Arc::new(Mutex::new(String::new()));
    let previous = Arc::new(panic::take_hook());
    {
        let (last, previous, me) = (last.clone(), previous.clone(), std::thread::current().id());
        panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == me { *last.lock().unwrap() = info.to_string() } else { previous(info) }
        }));
    }
    let mut out = Outcome { inputs: 0, panics: Vec::new() };
    for i in 0..n {
        let (path, input) = f.input(p);
        out.inputs += 1;
        if panic::catch_unwind(AssertUnwindSafe(|| run(p, &path, &input, &registry, false))).is_err() {
            let message = last.lock().unwrap().clone();
            let mut saved = PathBuf::new();
            if let Some(dir) = save {
                std::fs::create_dir_all(dir).unwrap();
                saved = dir.join(format!("crash-{seed}-{i}"));
                std::fs::write(&saved, corpus_entry(p, &path, &input)).unwrap();
            }
            eprintln!("{}: input {i} panicked: {message} (saved as {})", p.name(), saved.display());
            out.panics.push((message, saved));
        }
        if (i + 1).is_multiple_of(100_000) {
            eprintln!("{}: {} inputs, {} panics", p.name(), i + 1, out.panics.len());
        }
    }
    panic::set_hook(Box::new(move |info| previous(info)));
    out
}

/// Every corpus file goes through its parser without a panic.
#[test]
fn the_corpus_replays_without_a_panic() {
    let registry = Registry::standard();
    let mut count = 0;
    for p in Parser::ALL {
        let mut entries: Vec<_> = std::fs::read_dir(corpus_dir(p)).unwrap().flatten().map(|e| e.path()).collect();
        entries.sort();
        assert!(!entries.is_empty(), "no corpus for {}", p.name());
        for file in entries {
            let (path, input) = parse_entry(p, &std::fs::read(&file).unwrap());
            eprintln!("{}", file.display());
            run(p, &path, &input, &registry, true);
            count += 1;
        }
    }
    assert!(count >= Parser::ALL.len() * 3, "the corpus has a seed set per parser");
}

/// A short fuzz run per parser in every test run, so the driver stays in working order.
#[test]
fn a_short_fuzz_run_finds_no_panic() {
    for p in Parser::ALL {
        let n = if matches!(p, Parser::Scenario | Parser::Set | Parser::Shard) { 100 } else { 500 };
        let out = fuzz(p, n, 7, None);
        assert_eq!(out.inputs, n);
        assert!(out.panics.is_empty(), "{}: {:?}", p.name(), out.panics);
    }
}

/// The same seed gives the same inputs.
#[test]
fn the_inputs_depend_only_on_the_seed() {
    let inputs = |seed| {
        let mut f = Fuzzer::new(Parser::Swf, seed);
        (0..50).map(|_| f.input(Parser::Swf)).collect::<Vec<_>>()
    };
    assert_eq!(inputs(3), inputs(3));
    assert_ne!(inputs(3), inputs(4));
}

/// The dedicated run: `FUZZ_INPUTS` (default 10⁶) inputs for each parser of `FUZZ_PARSERS` (default all, comma
/// separated), from `FUZZ_SEED`; panicking inputs land in the corpus.
#[test]
#[ignore = "the dedicated fuzz run: minutes in release"]
fn fuzz_every_parser() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let n: u64 = env("FUZZ_INPUTS", "1000000").parse().unwrap();
    let seed: u64 = env("FUZZ_SEED", "1").parse().unwrap();
    let wanted = env("FUZZ_PARSERS", "scenario,swf,gwf,csv,set,shard");
    let mut total = 0;
    for p in Parser::ALL.into_iter().filter(|p| wanted.split(',').any(|w| w == p.name())) {
        let start = std::time::Instant::now();
        let out = fuzz(p, n, seed, Some(&corpus_dir(p)));
        eprintln!(
            "{}: {} inputs, {} panics, {:.1} s",
            p.name(),
            out.inputs,
            out.panics.len(),
            start.elapsed().as_secs_f64()
        );
        total += out.panics.len();
    }
    assert_eq!(total, 0, "panicking inputs were written to tests/corpus/");
}
