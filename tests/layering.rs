//! The layers of the agents crate, read from its source: the shared vocabulary (model, protocol, report, ledger,
//! sim), the registry's types and the matchmaking rules name no agent module; no kind names another kind to find
//! its peers (they ask for a service); and no files import each other in a circle. Only `standard.rs`, at the top,
//! names every kind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The agents crate's source files (paths relative to `agents/src`), each with the files its non-test code names
/// through `crate::` and `super::` paths (doc comments and `#[cfg(test)]` modules left out).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/src");
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let known: BTreeSet<String> = files.iter().cloned().collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let module = module_path(file);
        let mut named = BTreeSet::new();
        for line in code.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
            for (head, base) in
                [("crate::", Vec::new()), ("super::", module[..module.len().saturating_sub(1)].to_vec())]
            {
                for (i, _) in line.match_indices(head) {
                    let rest = &line[i + head.len()..];
                    let mut path = base.clone();
                    path.extend(
                        rest.split("::")
                            .map(|s| s.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')))
                            .map(|mut s| s.next().unwrap_or("").to_string())
                            .take_while(|s| !s.is_empty()),
                    );
                    if let Some(target) = resolve(&path, &known).filter(|t| t != file) {
                        named.insert(target);
                    }
                    // `use crate::a::{b, c::d}`: each item of the group.
                    if let Some(group) = rest.split_once('{').map(|(p, g)| (p, g.split('}').next().unwrap_or(""))) {
                        let prefix: Vec<String> =
                            group.0.trim_end_matches("::").split("::").map(String::from).collect();
                        for item in group.1.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                            let mut path = base.clone();
                            path.extend(prefix.iter().cloned());
                            path.extend(item.split(" as ").next().unwrap_or("").split("::").map(String::from));
                            if let Some(target) = resolve(&path, &known).filter(|t| t != file) {
                                named.insert(target);
                            }
                        }
                    }
                }
            }
        }
        graph.insert(file.clone(), named);
    }
    graph
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// `provider/kind.rs` → `["provider", "kind"]`; `provider/mod.rs` → `["provider"]`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The deepest file a module path lands in.
fn resolve(path: &[String], known: &BTreeSet<String>) -> Option<String> {
    (1..=path.len()).rev().find_map(|n| {
        let base = path[..n].join("/");
        [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find(|c| known.contains(c))
    })
}

/// The agent modules: those that declare a kind.
fn agent_modules(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    graph.keys().filter_map(|f| f.strip_suffix("/kind.rs")).map(|m| m.split('/').next().unwrap().to_string()).collect()
}

#[test]
fn the_shared_vocabulary_and_the_registry_name_no_agent_module() {
    let graph = imports();
    let agents = agent_modules(&graph);
    assert!(agents.contains("provider") && agents.contains("broker"), "{agents:?}");
    let below = |f: &str| {
        ["model.rs", "protocol.rs", "report.rs", "ledger.rs", "sim.rs"].contains(&f)
            || f.starts_with("registry/")
            || f.starts_with("matchmaking/")
    };
    for (file, named) in graph.iter().filter(|(f, _)| below(f)) {
        let upward: Vec<&String> = named.iter().filter(|t| agents.contains(t.split('/').next().unwrap())).collect();
        assert!(upward.is_empty(), "{file} names agent modules: {upward:?}");
    }
}

#[test]
fn no_kind_names_another_kind() {
    let graph = imports();
    for (file, named) in graph.iter().filter(|(f, _)| f.ends_with("kind.rs")) {
        let own = file.split('/').next().unwrap();
        let others: Vec<&String> =
            named.iter().filter(|t| t.ends_with("kind.rs") && t.split('/').next() != Some(own)).collect();
        assert!(others.is_empty(), "{file} names other kinds: {others:?}");
    }
}

#[test]
fn no_files_of_the_agents_crate_import_each_other_in_a_circle() {
    let graph = imports();
    // Tarjan's strongly connected components.
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        circles: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, (n, n));
        w.stack.push(v);
        for t in &w.graph[v] {
            if !w.index.contains_key(t.as_str()) {
                visit(w, t);
                let low = w.index[t.as_str()].1.min(w.index[v].1);
                w.index.get_mut(v).unwrap().1 = low;
            } else if w.stack.contains(&t.as_str()) {
                let low = w.index[t.as_str()].0.min(w.index[v].1);
                w.index.get_mut(v).unwrap().1 = low;
            }
        }
        if w.index[v].0 == w.index[v].1 {
            let at = w.stack.iter().position(|&s| s == v).unwrap();
            let component = w.stack.split_off(at);
            if component.len() > 1 {
                w.circles.push(component);
            }
        }
    }
    let mut w = Walk { graph: &graph, index: BTreeMap::new(), stack: Vec::new(), circles: Vec::new() };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    assert!(w.circles.is_empty(), "files importing each other in a circle: {:?}", w.circles);
}
