//! The rule that keeps the middle floor navigable: dependencies between
//! the crate's top-level modules point one way. This test reads the
//! sources and fails on any cycle, naming it, so a new import that closes
//! a loop is caught where it is written rather than found in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the top-level modules its code
/// names (`crate::…`, and `super::…` that climbs out of it), read by the
/// same path reader as the file-level check; comments are skipped.
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
            let module = module_path(src, &file);
            used.extend(
                resolved_paths(&without_comments(&text), &module)
                    .into_iter()
                    .filter_map(|path| path.into_iter().next())
                    .filter(|target| *target != name),
            );
        }
        graph.insert(name, used);
    }
    graph
}

/// `text` with each line's `//` comment (doc comments too) cut off.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
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
    let found: Vec<String> = resolved_paths(code, &[])
        .into_iter()
        .filter_map(|p| p.into_iter().next())
        .collect();
    assert_eq!(found, ["engine", "store", "store", "ask"]);
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

// ---------------------------------------------------------------------------
// File level: inside each module, its files (and sub-folders) must not
// import each other in a loop either. A loop between two files of one
// folder (each using the other's items) means they share something that
// belongs in a third file, which both would then use.

/// The module path of a source file under `src`: `ingest/pipeline.rs` is
/// `ingest::pipeline`, `ingest/mod.rs` is `ingest`, `lib.rs` is the root.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The paths `code` names through `crate::`, `super::` and `self::`, each
/// resolved against `module` to an absolute module path (groups expanded:
/// `super::{a::X, b}` is `…::a::X` and `…::b`).
fn resolved_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base: Vec<String> = match start {
                "crate::" => Vec::new(),
                "self::" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &code[at + start.len()..];
            // `super::super::…`
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            tree(rest, &base, &mut out);
        }
    }
    out
}

/// Reads one use-tree at the start of `text` (`a::b`, `a::{b, c::d}`),
/// pushing each path it names, prefixed with `base`.
fn tree(text: &str, base: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = base.to_vec();
    let mut rest = text;
    loop {
        let rest_trimmed = rest.trim_start();
        if let Some(group) = rest_trimmed.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        tree(&group[start..i], &path, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        tree(&group[start..i], &path, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let ident = leading_ident(rest_trimmed);
        if ident.is_empty() {
            break;
        }
        path.push(ident.clone());
        rest = &rest_trimmed[ident.len()..];
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    if path.len() > base.len() {
        out.push(path);
    }
}

/// For each folder of `src` (the root included): its files and
/// sub-folders as nodes, and which of them each one's code names.
fn sibling_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in rust_files(src) {
        let text = std::fs::read_to_string(&file).expect("a source file");
        // This file's own tests name paths in strings.
        if text.contains("fn sibling_graphs(") {
            continue;
        }
        // A file's unit tests (at its end, by convention) may exercise it
        // together with its neighbours: that is no dependency of the file.
        let text = [
            "#[cfg(test)]\nmod tests",
            "#[cfg(test)]\npub(super) mod tests",
        ]
        .iter()
        .filter_map(|start| text.find(start))
        .min()
        .map_or(text.as_str(), |at| &text[..at]);
        let code = without_comments(text);
        let module = module_path(src, &file);
        for path in resolved_paths(&code, &module) {
            // The folder both sit in: the longest common prefix, then the
            // node on each side is the next segment.
            let common = module.iter().zip(&path).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (module.get(common), path.get(common)) else {
                continue;
            };
            let folder = module[..common].join("::");
            let dir = src.join(module[..common].join("/"));
            let is_node =
                |name: &str| dir.join(format!("{name}.rs")).is_file() || dir.join(name).is_dir();
            if from != to && is_node(to) {
                graphs
                    .entry(folder)
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .insert(to.clone());
            }
        }
    }
    graphs
}

#[test]
fn no_two_files_of_a_module_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut loops = Vec::new();
    for src in [
        root.join("src"),
        root.join("../index-core/src"),
        root.join("../ingest-core/src"),
        root.join("../app/src"),
    ] {
        for (folder, graph) in sibling_graphs(&src) {
            if let Some(cycle) = find_cycle(&graph) {
                loops.push(format!(
                    "{} {folder}: {}",
                    src.display(),
                    cycle.join(" -> ")
                ));
            }
        }
    }
    assert!(
        loops.is_empty(),
        "file-level import loops:\n{}",
        loops.join("\n")
    );
}

#[test]
fn paths_are_resolved_against_the_file_that_names_them() {
    let module = vec!["ingest".to_owned(), "pipeline".to_owned()];
    let code = "use super::reuse::vectors_for;\nuse super::{jobs::FileSlot, memory::{A, B}};\nuse crate::store::Store;\nself::x::y();";
    let found: Vec<String> = resolved_paths(code, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "store::Store",
            "ingest::reuse::vectors_for",
            "ingest::jobs::FileSlot",
            "ingest::memory::A",
            "ingest::memory::B",
            "ingest::pipeline::x::y",
        ]
    );
}

/// A file's length past which its top must say why it is one file.
const LONG_FILE_LINES: usize = 450;

#[test]
fn files_past_450_lines_say_why_at_their_top() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let unexplained: Vec<String> = rust_files(&src)
        .into_iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).expect("a source file");
            let lines = text.lines().count();
            let top: String = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .map(|l| l.trim_start_matches("//!").trim())
                .collect::<Vec<_>>()
                .join(" ");
            (lines > LONG_FILE_LINES && !top.contains("on purpose"))
                .then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(
        unexplained.is_empty(),
        "files over {LONG_FILE_LINES} lines whose module doc does not say why (\"on purpose\"): {unexplained:?}"
    );
}
