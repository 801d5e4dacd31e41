//! The runtime's module layout has no import cycles: the top-level modules of `hpd-agent/src`
//! (a file or a folder each) depend on each other as a directed acyclic graph, so a reader can
//! follow one call downwards without turning back. Only code counts; doc comments may link
//! anywhere. `lib.rs` (re-exports) and `__private.rs` (generated code's entry points) sit above
//! everything and are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../hpd-agent/src")
}

/// Every `.rs` file under `path` (or `path` itself).
fn files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(path).expect("readable source folder") {
        let entry = entry.expect("readable entry").path();
        if entry.is_dir() {
            found.extend(files(&entry));
        } else if entry.extension().is_some_and(|e| e == "rs") {
            found.push(entry);
        }
    }
    found
}

/// The top-level modules named in code lines as `crate::{module}`.
fn dependencies(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                found.insert(name);
            }
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = source_root();
    let mut modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    for entry in std::fs::read_dir(&root).expect("hpd-agent/src exists") {
        let path = entry.expect("readable entry").path();
        let name = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        if name == "lib" || name == "__private" {
            continue;
        }
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            modules.insert(name, path);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, path)| {
            let mut deps = BTreeSet::new();
            for file in files(path) {
                let text = std::fs::read_to_string(&file).expect("readable source");
                deps.extend(dependencies(&text, &names));
            }
            deps.remove(name);
            (name.clone(), deps)
        })
        .collect()
}

/// A cycle through `node`, if the graph has one reachable from it.
fn cycle_from(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|n| n == node) {
        let mut cycle = path[start..].to_vec();
        cycle.push(node.to_owned());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_owned());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(node.to_owned());
    None
}

#[test]
fn top_level_modules_have_no_import_cycles() {
    let graph = graph();
    for expected in [
        "agent",
        "collapse",
        "harness",
        "middleware",
        "tool",
        "config",
    ] {
        assert!(graph.contains_key(expected), "module {expected} not found");
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, &graph, &mut Vec::new(), &mut done) {
            panic!(
                "import cycle: {}\nthe module graph: {graph:#?}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_checker_finds_a_cycle() {
    let modules: BTreeSet<String> = ["a", "b"].iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        dependencies("use crate::b::X;\n// crate::a in a comment\n", &modules),
        BTreeSet::from(["b".to_owned()])
    );
    let graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    let cycle = cycle_from("a", &graph, &mut Vec::new(), &mut BTreeSet::new());
    assert_eq!(
        cycle,
        Some(vec!["a".to_owned(), "b".to_owned(), "a".to_owned()])
    );
}
