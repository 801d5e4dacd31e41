//! The module layout has no import cycles, so a reader can follow one call downwards without
//! turning back. Three graphs are checked:
//!
//! - the top-level modules of `hpd-agent/src` (a file or a folder each); `lib.rs` (re-exports)
//!   and `__private.rs` (generated code's entry points) sit above everything and are left out;
//! - the files of `hpd-agent/src/agent/`; `agent/mod.rs` (the `Agent` type and the folder's
//!   re-exports) sits above them and is left out, but a name a file takes from it through
//!   `super::Name` counts as a dependency on the sibling `mod.rs` re-exports it from;
//! - the top-level modules of `hpd-agent-macros/src` (a file or a folder each); `lib.rs` (the
//!   macro entry points) sits above them and is left out.
//!
//! Only code counts; comments and doc comments may link anywhere.

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

/// `text` with comments, string literals and char literals blanked out, so only code is left.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            code.push(' ');
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_char_before(&chars, i) {
            // A raw string: r"...", r#"..."#.
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                code.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            code.push(' ');
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push(' ');
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{..}'); a lifetime has no closing quote.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            code.push(' ');
        } else {
            code.push(c);
            i += 1;
        }
    }
    code
}

fn ident_char_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    Colons,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            continue;
        }
        i += 1;
        out.push(match c {
            ':' if chars.get(i) == Some(&':') => {
                i += 1;
                Token::Colons
            }
            '{' => Token::Open,
            '}' => Token::Close,
            ',' => Token::Comma,
            '*' => Token::Star,
            c if c.is_whitespace() => continue,
            _ => Token::Other,
        });
    }
    out
}

/// One path a use tree or a path in code names: the absolute module path and the name it is
/// known by in the importing file (the alias, or the last segment).
#[derive(Debug, PartialEq)]
struct Leaf {
    path: Vec<String>,
    name: String,
}

fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i) {
        Some(Token::Ident(name)) => Some(name),
        _ => None,
    }
}

/// Reads the use tree (or plain path) at `tokens[i]` under `base`; returns where it ends.
fn use_tree(tokens: &[Token], mut i: usize, base: &[String], leaves: &mut Vec<Leaf>) -> usize {
    match tokens.get(i) {
        Some(Token::Open) => {
            i += 1;
            while i < tokens.len() && tokens[i] != Token::Close {
                if tokens[i] == Token::Comma {
                    i += 1;
                    continue;
                }
                let end = use_tree(tokens, i, base, leaves);
                i = if end == i { i + 1 } else { end };
            }
            i + 1
        }
        Some(Token::Star) => {
            leaves.push(Leaf {
                path: base.to_vec(),
                name: "*".to_owned(),
            });
            i + 1
        }
        Some(Token::Ident(name)) if name == "self" => {
            leaves.push(Leaf {
                path: base.to_vec(),
                name: base.last().cloned().unwrap_or_default(),
            });
            i + 1
        }
        Some(Token::Ident(name)) => {
            let mut path = base.to_vec();
            path.push(name.clone());
            if tokens.get(i + 1) == Some(&Token::Colons) {
                return use_tree(tokens, i + 2, &path, leaves);
            }
            let mut name = name.clone();
            i += 1;
            if ident(tokens, i) == Some("as") {
                if let Some(alias) = ident(tokens, i + 1) {
                    name = alias.to_owned();
                }
                i += 2;
            }
            leaves.push(Leaf { path, name });
            i
        }
        _ => i,
    }
}

/// Every `crate::`, `super::` and `self::` path in the code of `text` (use trees expanded),
/// resolved against `module`, the path of the module the file is.
fn paths(text: &str, module: &[String]) -> Vec<Leaf> {
    let tokens = tokens(&code_only(text));
    let mut leaves = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let after_colons = i > 0 && tokens[i - 1] == Token::Colons;
        let start = ident(&tokens, i);
        if after_colons
            || !matches!(start, Some("crate" | "super" | "self"))
            || tokens.get(i + 1) != Some(&Token::Colons)
        {
            i += 1;
            continue;
        }
        let mut base: Vec<String> = match start {
            Some("crate") => Vec::new(),
            Some("self") => module.to_vec(),
            _ => module[..module.len().saturating_sub(1)].to_vec(),
        };
        i += 2;
        while ident(&tokens, i) == Some("super") && tokens.get(i + 1) == Some(&Token::Colons) {
            base.pop();
            i += 2;
        }
        let end = use_tree(&tokens, i, &base, &mut leaves);
        i = end.max(i + 1);
    }
    leaves
}

/// The names `root` (a folder's `mod.rs` or a crate's `lib.rs`) re-exports from its child
/// modules, as `name -> child`: `pub use child::Name;`, `use child::{A, B as C};`.
fn reexports(root: &str, nodes: &BTreeSet<String>) -> BTreeMap<String, String> {
    let tokens = tokens(&code_only(root));
    let mut found = BTreeMap::new();
    for i in 0..tokens.len() {
        if ident(&tokens, i) != Some("use") {
            continue;
        }
        let mut start = i + 1;
        if ident(&tokens, start) == Some("self") && tokens.get(start + 1) == Some(&Token::Colons) {
            start += 2;
        }
        let Some(child) = ident(&tokens, start).filter(|c| nodes.contains(*c)) else {
            continue;
        };
        let mut leaves = Vec::new();
        use_tree(&tokens, start, &[], &mut leaves);
        for leaf in leaves {
            if leaf.name != "*" {
                found.insert(leaf.name, child.to_owned());
            }
        }
    }
    found
}

/// The module path of `file` inside the crate whose source root is `crate_root`.
fn module_path(crate_root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(crate_root).expect("a file of the crate");
    let mut path: Vec<String> = relative
        .with_extension("")
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
        path.pop();
    }
    path
}

/// The module graph of the children of one folder: a node per file or subfolder of `folder`
/// (except the folder's own `root` file, `mod.rs` or `lib.rs`), an edge per `crate::`/`super::`/
/// `self::` path from one child into another, directly or through a re-export of `root`.
fn folder_graph(crate_root: &Path, folder: &str, root: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = crate_root.join(folder);
    let prefix = module_path(crate_root, &dir.join("mod.rs"));
    let mut children: BTreeMap<String, PathBuf> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("the folder exists") {
        let path = entry.expect("readable entry").path();
        let name = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && name != root) {
            children.insert(name, path);
        }
    }
    let names: BTreeSet<String> = children.keys().cloned().collect();
    let root_text = std::fs::read_to_string(dir.join(format!("{root}.rs"))).expect("root file");
    let reexported = reexports(&root_text, &names);
    children
        .iter()
        .map(|(name, path)| {
            let mut deps = BTreeSet::new();
            for file in files(path) {
                let text = std::fs::read_to_string(&file).expect("readable source");
                for leaf in paths(&text, &module_path(crate_root, &file)) {
                    let Some(rest) = leaf.path.strip_prefix(prefix.as_slice()) else {
                        continue;
                    };
                    let target = match rest.first() {
                        Some(first) if names.contains(first) => Some(first.clone()),
                        Some(first) => reexported.get(first).cloned(),
                        // `use super::Name;`: the leaf itself is the re-exported name.
                        None => reexported.get(&leaf.name).cloned(),
                    };
                    deps.extend(target);
                }
            }
            deps.remove(name);
            (name.clone(), deps)
        })
        .collect()
}

/// Panics naming the first cycle in `graph`, if it has one.
fn assert_acyclic(what: &str, graph: &BTreeMap<String, BTreeSet<String>>) {
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, graph, &mut Vec::new(), &mut done) {
            panic!(
                "import cycle in {what}: {}\nthe module graph: {graph:#?}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn agent_files_have_no_import_cycles() {
    let graph = folder_graph(&source_root(), "agent", "mod");
    for expected in [
        "builder",
        "registration",
        "run",
        "sub_agent",
        "tool_session",
    ] {
        assert!(
            graph.contains_key(expected),
            "agent/{expected}.rs not found"
        );
    }
    assert!(
        graph["builder"].contains("sub_agent"),
        "builder.rs uses sub_agent.rs; the graph misses it: {graph:#?}"
    );
    assert_acyclic("hpd-agent/src/agent/", &graph);
}

#[test]
fn macro_modules_have_no_import_cycles() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hpd-agent-macros/src");
    let graph = folder_graph(&crate_root, "", "lib");
    for expected in ["args", "ast", "expand", "fallback", "valid"] {
        assert!(
            graph.contains_key(expected),
            "macro module {expected} not found"
        );
    }
    assert!(
        graph["expand"].contains("ast"),
        "expand uses ast (through `super::super::ast` too); the graph misses it: {graph:#?}"
    );
    assert_acyclic("hpd-agent-macros/src/", &graph);
}

#[test]
fn paths_are_resolved_against_the_file() {
    let module: Vec<String> = vec!["agent".to_owned(), "builder".to_owned()];
    let text = r#"
        use super::{events::{self, Emitter}, registration::split as s};
        use crate::agent::run::Start;
        // use super::stored::X;
        /* super::budget::Y */
        let text = "super::tool_session::Z";
        let c = '"'; let l: &'static str = "";
        fn f() { super::super::agent::stored::f(); self::inner::g(); }
    "#;
    let got: Vec<(String, String)> = paths(text, &module)
        .into_iter()
        .map(|leaf| (leaf.path.join("::"), leaf.name))
        .collect();
    let expected: Vec<(String, String)> = [
        ("agent::events", "events"),
        ("agent::events::Emitter", "Emitter"),
        ("agent::registration::split", "s"),
        ("agent::run::Start", "Start"),
        ("agent::stored::f", "f"),
        ("agent::builder::inner::g", "g"),
    ]
    .iter()
    .map(|(p, n)| ((*p).to_owned(), (*n).to_owned()))
    .collect();
    assert_eq!(got, expected);
    let nodes: BTreeSet<String> = ["builder", "events"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let found = reexports(
        "mod builder;\npub use builder::{AgentBuilder, Connect as C};\nuse events::E;\nuse std::sync::Arc;\n",
        &nodes,
    );
    assert_eq!(
        found,
        BTreeMap::from([
            ("AgentBuilder".to_owned(), "builder".to_owned()),
            ("C".to_owned(), "builder".to_owned()),
            ("E".to_owned(), "events".to_owned()),
        ])
    );
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
    assert_acyclic("hpd-agent/src", &graph);
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
