//! Inside each crate the modules depend one way too, and no source file grows past what can
//! be read at once. Read from the source text: a module's references are the `crate::name`
//! paths in its code (comments and `#[cfg(test)] mod` blocks left out), a directory module
//! counting as one: the files inside one directory module (`super::` between them) are not
//! checked against each other, and a name re-exported at the crate root is not traced. The long files there are today are listed, each to be split: a new one
//! fails, and so does a listed one that has become short (so the list only shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use armctl_e2e::workspace_dir;

/// The crates whose `src/` is read.
const CRATES: [&str; 9] = [
    "model", "dynamics", "control", "sim", "ident", "runtime", "ros", "cli", "capi",
];

/// Source files allowed over [`LONGEST_FILE`] lines, from the workspace root: none since
/// every long file was split (the list may only shrink).
const LONG_FILES_TO_SPLIT: &[&str] = &[];

/// The most lines a source file may have.
const LONGEST_FILE: usize = 600;

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The top-level module a file of `src/` belongs to; none for the crate root and binaries.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "bin")).then(|| name.to_string())
}

/// The code of a file without comments and without its test modules.
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        if line.starts_with("#[cfg(test)]") && next.starts_with("mod ") {
            if next.ends_with(';') {
                i += 2;
                continue;
            }
            break; // an inline test module: the file's last item by this project's habit
        }
        if !line.starts_with("//") {
            code.push(lines[i]);
        }
        i += 1;
    }
    code
}

/// The module names that follow `crate::` in `code`, within `use crate::{a, b::C}` groups too.
fn crate_paths(code: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => names.extend(group_heads(group)),
            None => names.push(leading_name(rest)),
        }
    }
    names.retain(|name| !name.is_empty());
    names
}

/// The first name of each item of a `{...}` group (its text after the `{`).
fn group_heads(group: &str) -> Vec<&str> {
    let mut heads = vec![leading_name(group.trim_start())];
    let mut depth = 0;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => heads.push(leading_name(group[at + 1..].trim_start())),
            _ => {}
        }
    }
    heads
}

/// The identifier `text` starts with.
fn leading_name(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// One crate's module graph: module -> the modules its code names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = top_module(src, file) else {
            continue;
        };
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = fs::read_to_string(file).unwrap();
        let targets = graph.entry(from.clone()).or_default();
        let code = code_lines(&text).join("\n");
        for name in crate_paths(&code) {
            if name != from && modules.contains(name) {
                targets.insert(name.to_string());
            }
        }
    }
    graph
}

/// The modules `start` reaches.
fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

/// The references that lie on a cycle: `from -> to` where `to` reaches `from` again.
fn cycle_edges(crate_name: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut edges = Vec::new();
    for (from, targets) in graph {
        for to in targets {
            if reachable(graph, to).contains(from) {
                edges.push(format!("{crate_name}: {from} -> {to}"));
            }
        }
    }
    edges
}

/// What is found and not listed, and what is listed and not found.
fn compare(found: &[String], listed: &[&str]) -> (Vec<String>, Vec<String>) {
    let new = found
        .iter()
        .filter(|f| !listed.contains(&f.as_str()))
        .cloned()
        .collect();
    let gone = listed
        .iter()
        .filter(|l| !found.iter().any(|f| f == *l))
        .map(|l| l.to_string())
        .collect();
    (new, gone)
}

#[test]
fn the_modules_of_each_crate_depend_one_way() {
    let root = workspace_dir();
    let mut found = Vec::new();
    for name in CRATES {
        let graph = module_graph(&root.join("crates").join(name).join("src"));
        found.extend(cycle_edges(name, &graph));
    }
    assert!(
        found.is_empty(),
        "module references that close a cycle (depend one way instead): {found:#?}"
    );
}

#[test]
fn no_source_file_is_longer_than_600_lines_but_the_listed_ones() {
    let root = workspace_dir();
    let mut dirs: Vec<PathBuf> = CRATES
        .iter()
        .flat_map(|c| ["src", "tests", "benches"].map(|d| root.join("crates").join(c).join(d)))
        .collect();
    dirs.push(root.join("tests"));
    let mut found = Vec::new();
    for file in dirs.iter().flat_map(|d| rust_files(d)) {
        let lines = fs::read_to_string(&file).unwrap().lines().count();
        if lines > LONGEST_FILE {
            let relative = file.strip_prefix(&root).unwrap();
            found.push(relative.to_string_lossy().into_owned());
        }
    }
    let (new, gone) = compare(&found, LONG_FILES_TO_SPLIT);
    assert!(
        new.is_empty(),
        "source files over {LONGEST_FILE} lines (split them): {new:#?}"
    );
    assert!(
        gone.is_empty(),
        "listed long files no longer over {LONGEST_FILE} lines (remove them from LONG_FILES_TO_SPLIT): {gone:#?}"
    );
}

#[test]
fn a_cycle_is_found_and_a_one_way_graph_has_none() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        g
    };
    let one_way = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
    assert!(cycle_edges("x", &one_way).is_empty());
    let circle = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("a", "d")]);
    assert_eq!(
        cycle_edges("x", &circle),
        ["x: a -> b", "x: b -> c", "x: c -> a"]
    );
    assert_eq!(
        crate_paths("use crate::braking::Brake; x = crate::a::B + $crate::np::S;"),
        ["braking", "a", "np"]
    );
    assert_eq!(
        crate_paths("use crate::{\n    a::{X, y::Z},\n    b,\n};"),
        ["a", "b"]
    );
    let text = "use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n";
    assert_eq!(code_lines(text), ["use crate::a;"]);
}
