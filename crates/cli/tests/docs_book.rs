//! The book under `docs/` and the README: every link and every repository path they name
//! resolves (a renamed file or a moved section fails here, not in a reader's browser), and
//! mdBook builds the book and runs its examples (`mdbook build`, `mdbook test`; installed
//! once by `tests/interop/install_mdbook.sh`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{documentation_pages as pages, workspace as workspace_dir};

/// The text outside code blocks (a shell example may print `[x](y)`).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out += line;
            out.push('\n');
        }
    }
    out
}

/// The targets of `[text](target)` links.
fn links(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            out.push(after[..end].to_string());
        }
        rest = after;
    }
    out
}

/// mdBook's (and GitHub's) id of a heading: lower case, spaces to `-`, punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    prose(&text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// Paths in backticks that name a file or folder of the repository.
fn repository_paths(text: &str) -> Vec<String> {
    const ROOTS: [&str; 11] = [
        "crates/",
        "config/",
        "launch/",
        "urdf/",
        "tests/",
        "docs/",
        "include/",
        "ros2_control/",
        "bench/",
        ".ci/",
        "README.md",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        // A path broken over two lines is one path.
        .map(|token| token.split_whitespace().collect::<String>())
        .filter(|token| ROOTS.iter().any(|r| token.starts_with(r)))
        // `file.rs::test_name` or `file.rs:12` names the file.
        .map(|token| token.split(':').next().unwrap_or_default().to_string())
        .filter(|token| !token.contains(|c: char| " <>*{}$|".contains(c)))
        .map(|token| token.trim_end_matches(['.', ',']).to_string())
        .collect()
}

#[test]
fn every_link_and_repository_path_in_the_docs_resolves() {
    let root = workspace_dir();
    let mut broken = vec![];
    for page in pages() {
        let text = prose(&std::fs::read_to_string(&page).unwrap());
        let dir = page.parent().unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file)
            };
            if !target.exists() {
                broken.push(format!("{name}: link to {link}: no such file"));
            } else if !anchor.is_empty() && !anchors(&target).contains(anchor) {
                broken.push(format!("{name}: link to {link}: no such heading"));
            }
        }
        for path in repository_paths(&text) {
            if !root.join(&path).exists() {
                broken.push(format!("{name}: names `{path}`, which does not exist"));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn every_page_is_in_the_book() {
    let docs = workspace_dir().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    for page in pages().iter().filter(|p| p.starts_with(&docs)) {
        let name = page.strip_prefix(&docs).unwrap().display().to_string();
        assert!(
            name == "SUMMARY.md" || listed.contains(&name),
            "docs/{name} is not in docs/SUMMARY.md"
        );
    }
}

fn mdbook() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mdbook");
    let script = workspace_dir().join("tests/interop/install_mdbook.sh");
    let out = Command::new("sh").arg(script).arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "installing mdbook failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn the_book_builds_and_its_examples_pass() {
    let mdbook = mdbook();
    let docs = workspace_dir().join("docs");
    let dest = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("book");
    let build = [
        "build".into(),
        "--dest-dir".into(),
        dest.clone().into_os_string(),
    ];
    for args in [build.to_vec(), vec!["test".into()]] {
        let out = Command::new(&mdbook)
            .args(&args)
            .arg(&docs)
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !log.contains("WARN") && !log.contains("ERROR"),
            "mdbook {:?}:\n{log}",
            args[0]
        );
    }
    assert!(dest.join("index.html").exists());
    assert!(dest.join("reference/parameters.html").exists());
}
