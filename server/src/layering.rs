//! The rule that keeps the middle floor navigable: dependencies between
//! the crate's top-level modules point one way. This test reads the
//! sources and fails on any cycle, naming it, so a new import that closes
//! a loop is caught where it is written rather than found in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the top-level modules its code
/// names as `crate::<module>` (comments are not code and are skipped).
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    let entries = std::fs::read_dir(src).expect("the crate's src directory");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let Some(name) = module_name(&path) else {
            continue;
        };
        // This file's own test data names modules in strings.
        if name == "layering" {
            continue;
        }
        let mut used = BTreeSet::new();
        for file in rust_files(&path) {
            let text = std::fs::read_to_string(&file).expect("a source file");
            let code: String = text
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            used.extend(named_modules(&code).filter(|target| *target != name));
        }
        graph.insert(name, used);
    }
    graph
}

/// The top-level modules `code` names: `crate::a::…`, and each of
/// `crate::{a::…, b}`. (`other_crate::…` is another crate's path.)
fn named_modules(code: &str) -> impl Iterator<Item = String> + '_ {
    code.match_indices("crate::").flat_map(move |(at, _)| {
        let before = code[..at].chars().next_back();
        let other_crate = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let rest = &code[at + "crate::".len()..];
        let mut found = Vec::new();
        if other_crate {
            return found.into_iter();
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Split at the group's own commas, not those of nested groups.
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.push(leading_ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(leading_ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(leading_ident(rest));
        }
        found.retain(|m| !m.is_empty());
        found.into_iter()
    })
}

fn leading_ident(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// `foo.rs` or `foo/` is module `foo`; `lib.rs` and `main.rs` are the root.
fn module_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?.to_owned();
    if path.is_dir() {
        return Some(stem);
    }
    let is_rust = path.extension().is_some_and(|e| e == "rs");
    (is_rust && stem != "lib" && stem != "main").then_some(stem)
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a module directory") {
            let p = entry.expect("a directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    files
}

/// A cycle in `graph`, as the modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_modules_import_each_other_directly_or_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = imports(&src);
    assert!(graph.contains_key("engine") && graph.contains_key("store"));
    if let Some(cycle) = find_cycle(&graph) {
        panic!("an import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn module_paths_are_read_plain_and_grouped() {
    let code = "use crate::engine::Engine;\nuse crate::{store::{Store, filter}, ask};\nuse docshelf_crate::x;";
    let found: Vec<String> = named_modules(code).collect();
    assert_eq!(found, ["engine", "store", "ask"]);
}

#[test]
fn a_cycle_is_found_and_named() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph).map(|c| c.join(" -> ")),
        Some("a -> b -> c -> a".to_owned())
    );
    let acyclic: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec![])]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
        .collect();
    assert_eq!(find_cycle(&acyclic), None);
}
