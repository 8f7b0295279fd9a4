//! Every command the README and the book show, run as a reader would type it, from the
//! Markdown itself, so that the text cannot drift from what the programs do.
//!
//! - Each ```` ```sh ```` block is one shell script, run in a scratch directory that holds the
//!   repository's `urdf/`, `config/` and `tests/` (links) with `armctl`, `controller_node` and
//!   `sim_node` on the `PATH`: `cargo run --release -p armctl --` and `target/release/` are
//!   read as those programs, and `cargo build` lines are what this test's build already did.
//!   A line ending in `# until Ctrl-C` runs 8 s and is then stopped with SIGINT (it must exit
//!   cleanly); programs left in the background are stopped at the block's end.
//! - A comment line `#> TEXT` is what the command before it prints: some line of the block's
//!   output must match TEXT, `...` standing for anything and each number within 5 % (or
//!   within what the line states as `(within N %)`).
//! - Inline code in the prose that starts with `armctl` or `cargo run` and names a file of the
//!   repository is run too, on its own.
//! - A block that needs what the test machine lacks (ROS 2's command-line tools, colcon, a ROS
//!   workspace, the network) is listed as not run, with the reason; so is the test command.

use std::path::PathBuf;
use std::process::Command;

#[path = "common/mod.rs"]
mod common;

use common::{documentation_pages as pages, workspace};

/// A command example and where it is.
#[derive(Debug, Clone)]
struct Example {
    page: String,
    line: usize,
    /// The script's lines (continuations joined, comments other than `#>` dropped).
    commands: Vec<String>,
    /// `#>` lines: what the output must show.
    expected: Vec<String>,
}

/// Programs the test machine lacks, and why a block that starts one is not run.
const NOT_HERE: [(&str, &str); 8] = [
    (
        "ros2",
        "needs ROS 2's command-line tools (ros2cli), which the PyPI wheels do not include",
    ),
    (
        "colcon",
        "needs colcon and a ROS 2 workspace (checked by CI's colcon build)",
    ),
    ("pip", "installs into the reader's Python (network)"),
    ("git", "clones from the network"),
    ("rosdep", "needs rosdep and a ROS 2 installation"),
    ("source", "sources a ROS 2 workspace's setup file"),
    ("mkdir -p ~/ws", "sets up a ROS 2 workspace"),
    (
        "cargo test",
        "the test command itself (this test is part of it)",
    ),
];

/// The `sh` blocks of `text`.
fn sh_blocks(page: &str, text: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut block: Option<Example> = None;
    let mut pending = String::new();
    for (k, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut block, trimmed.starts_with("```")) {
            (None, true) if trimmed == "```sh" => {
                block = Some(Example {
                    page: page.into(),
                    line: k + 1,
                    commands: vec![],
                    expected: vec![],
                });
            }
            (Some(_), true) => found.extend(block.take()),
            (Some(b), false) => {
                if let Some(expected) = trimmed.strip_prefix("#>") {
                    b.expected.push(expected.trim().to_string());
                } else if trimmed.starts_with('#') || trimmed.is_empty() {
                } else if let Some(head) = line.trim_end().strip_suffix('\\') {
                    pending += head;
                    pending.push(' ');
                } else {
                    pending += line.trim();
                    b.commands.push(std::mem::take(&mut pending));
                }
            }
            (None, false) => {}
            (None, true) => {}
        }
    }
    found
}

/// Inline code spans of `text` that are whole commands: they start with `armctl` or
/// `cargo run` and name a file of the repository.
fn inline_commands(page: &str, text: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut fenced = false;
    let mut prose = String::new();
    let mut starts = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            starts.push((prose.len(), k + 1));
            prose += line;
            prose.push('\n');
        }
    }
    for (n, span) in prose.split('`').enumerate().filter(|(n, _)| n % 2 == 1) {
        let command = span.split_whitespace().collect::<Vec<_>>().join(" ");
        let runnable = (command.starts_with("armctl ") || command.starts_with("cargo run "))
            && command
                .split(' ')
                .any(|w| w.contains('/') && workspace().join(w).is_file());
        if runnable {
            let offset = prose.split('`').take(n).map(|s| s.len() + 1).sum::<usize>();
            let line = starts
                .iter()
                .take_while(|(start, _)| *start <= offset)
                .last()
                .map_or(0, |(_, l)| *l);
            found.push(Example {
                page: page.into(),
                line,
                commands: vec![command],
                expected: vec![],
            });
        }
    }
    found
}

/// Why `example` cannot run here, if it cannot.
fn not_runnable(example: &Example) -> Option<&'static str> {
    example.commands.iter().find_map(|c| {
        NOT_HERE
            .iter()
            .find(|(program, _)| c == program || c.starts_with(&format!("{program} ")))
            .map(|(_, why)| *why)
    })
}

/// A command line as the script runs it.
fn script_line(command: &str) -> String {
    let mut line = command
        .replace("cargo run --release -p armctl --", "armctl")
        .replace("target/release/", "");
    if line.starts_with("cargo build") {
        // Built by this test's build; what follows `&&` still runs.
        return match line.split_once("&&") {
            Some((_, rest)) => format!("true && {}", rest.trim()),
            None => "true".into(),
        };
    }
    if let Some((head, _)) = line.split_once("# until Ctrl-C") {
        line = format!("timeout --preserve-status -s INT 8 {}", head.trim());
    }
    // A trailing comment stays a comment; `&` keeps its meaning.
    line
}

/// The scratch directory of example `k`: the repository's inputs, and a `bin/` of programs.
fn scratch(k: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("armctl-docs-{}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    for input in ["urdf", "config", "tests"] {
        std::os::unix::fs::symlink(workspace().join(input), dir.join(input)).unwrap();
    }
    let armctl = PathBuf::from(env!("CARGO_BIN_EXE_armctl"));
    for program in ["armctl", "controller_node", "sim_node"] {
        let path = armctl.with_file_name(program);
        assert!(
            path.exists(),
            "{} is missing: cargo build --release --workspace --bins",
            path.display()
        );
        std::os::unix::fs::symlink(path, dir.join("bin").join(program)).unwrap();
    }
    dir
}

/// Runs `example` in its scratch directory: the exit status and everything it printed.
fn run(example: &Example, k: usize) -> (bool, String) {
    let dir = scratch(k);
    // Programs left in the background are stopped at the end, even when a command fails.
    let mut script = String::from(
        "set -e\nBACKGROUND=\ntrap 'kill -INT $BACKGROUND 2>/dev/null || true' EXIT\n",
    );
    for command in &example.commands {
        let line = script_line(command);
        script += &line;
        script.push('\n');
        if line
            .split('#')
            .next()
            .unwrap_or("")
            .trim_end()
            .ends_with('&')
        {
            script += "BACKGROUND=\"$BACKGROUND $!\"\n";
        }
    }
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&dir)
        .env("PATH", path)
        // Domains 190-199: no other test uses them (examples run one after the other).
        .env("ROS_DOMAIN_ID", (190 + k % 10).to_string())
        .env("ROS_LOCALHOST_ONLY", "1")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A piece of printed text: a number, or one character that is not white space.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Number(f64),
    Char(char),
}

/// `text` as tokens; white space is dropped, so spacing never matters.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let digit_next = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        let starts = c.is_ascii_digit() || (c == '-' && digit_next);
        let in_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if starts && !in_word {
            let mut j = i + 1;
            while j < chars.len() {
                let exponent = (chars[j] == 'e' || chars[j] == 'E')
                    && chars
                        .get(j + 1)
                        .is_some_and(|n| n.is_ascii_digit() || *n == '-' || *n == '+');
                let fraction =
                    chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit);
                if chars[j].is_ascii_digit() || fraction {
                    j += 1;
                } else if exponent {
                    j += 2;
                } else {
                    break;
                }
            }
            let token: String = chars[i..j].iter().collect();
            if let Ok(v) = token.parse::<f64>() {
                out.push(Token::Number(v));
                i = j;
                continue;
            }
        }
        if !c.is_whitespace() {
            out.push(Token::Char(c));
        }
        i += 1;
    }
    out
}

/// Whether token `got` shows `want`, numbers within `tolerance` (relative).
fn same(want: Token, got: Token, tolerance: f64) -> bool {
    match (want, got) {
        (Token::Number(w), Token::Number(g)) => {
            (w - g).abs() <= tolerance * w.abs().max(g.abs()) || w == g
        }
        (w, g) => w == g,
    }
}

/// Whether `line` shows `expected`: the same characters (spacing aside), `...` for anything,
/// numbers within 5 % or the `(within N %)` the line ends with.
fn matches(expected: &str, line: &str) -> bool {
    let (tolerance, expected) = match expected.rsplit_once("(within ") {
        Some((head, rest)) if rest.trim_end().ends_with("%)") => {
            let share: f64 = rest
                .trim_end()
                .trim_end_matches("%)")
                .trim()
                .parse()
                .unwrap();
            (share / 100.0, head.trim_end())
        }
        _ => (0.05, expected),
    };
    let line = tokens(line);
    let mut from = 0;
    for part in expected.split("...") {
        let want = tokens(part);
        if want.is_empty() {
            continue;
        }
        let found = (from..=line.len().saturating_sub(want.len())).find(|&start| {
            line.len() >= start + want.len()
                && want
                    .iter()
                    .zip(&line[start..])
                    .all(|(w, g)| same(*w, *g, tolerance))
        });
        match found {
            Some(start) => from = start + want.len(),
            None => return false,
        }
    }
    true
}

/// Every documented command that can run here runs, exits 0 and prints what the text says.
#[test]
fn every_command_the_docs_show_runs_and_prints_what_they_say() {
    let root = workspace();
    let mut examples = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        examples.extend(sh_blocks(&name, &text));
        examples.extend(inline_commands(&name, &text));
    }
    let (mut ran, mut not_run, mut failures) = (0, Vec::new(), Vec::new());
    for (k, example) in examples.iter().enumerate() {
        let place = format!("{}:{}", example.page, example.line);
        if let Some(why) = not_runnable(example) {
            not_run.push(format!("{place}: {why}"));
            continue;
        }
        let (ok, output) = run(example, k);
        ran += 1;
        if !ok {
            failures.push(format!(
                "{place}: failed\n{}\n{output}",
                example.commands.join("\n")
            ));
            continue;
        }
        for expected in &example.expected {
            if !output.lines().any(|line| matches(expected, line)) {
                failures.push(format!("{place}: no line shows '{expected}' in\n{output}"));
            }
        }
    }
    eprintln!(
        "documented examples: {ran} run, {} not run here:",
        not_run.len()
    );
    for line in &not_run {
        eprintln!("  not run: {line}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 13, "only {ran} examples found to run");
}

#[test]
fn expected_lines_match_within_their_tolerance_and_no_further() {
    let line = "contact at flange: final force [0.006, -2.317, 10.000] N, peak 29.779 N";
    assert!(matches(
        "contact at flange: final force [0.006, -2.317, 10.000] N, peak 29.779 N",
        line
    ));
    assert!(matches(
        "contact at flange: final force [0.0063, -2.3, 10.0] N, peak 30 N",
        line
    ));
    assert!(!matches(
        "contact at flange: final force [0.006, -2.317, 12.000] N, peak 29.779 N",
        line
    ));
    assert!(matches(
        "contact at flange: final force [..., 10.000] N",
        line
    ));
    assert!(!matches("contact at wrist", line));
    assert!(matches("peak 28 N (within 10 %)", line));
    assert!(!matches("peak 28 N", line));
}
