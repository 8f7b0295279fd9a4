//! Property test: a joint log written by armctl (`JointLog::write_csv`), mutated (a character
//! range deleted or duplicated, a cell swapped for garbage), is read back and checked as
//! `armctl identify` reads it. Nothing panics, and every refusal is a short message.
//!
//! The cases come from a fixed seed, so every run checks the same files.

use std::path::PathBuf;

use armctl_ident::JointLog;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Longest error message accepted: a sentence or two, whatever the input.
const MAX_MESSAGE_CHARS: usize = 2000;

fn log_text() -> String {
    let n = 40;
    let time: Vec<f64> = (0..n).map(|k| k as f64 * 1e-3).collect();
    let wave = |phase: f64| {
        time.iter()
            .map(|t| (t * 10.0 + phase).sin())
            .collect::<Vec<_>>()
    };
    let rows = |a: Vec<f64>, b: Vec<f64>| a.into_iter().zip(b).map(|(x, y)| vec![x, y]).collect();
    let log = JointLog {
        joint_names: vec!["j1".into(), "j2".into()],
        position: rows(wave(0.0), wave(1.0)),
        velocity: Some(rows(wave(2.0), wave(3.0))),
        acceleration: None,
        effort: rows(wave(4.0), wave(5.0)),
        time,
    };
    let path = scratch("original");
    log.write_csv(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    text
}

/// A file of this test's own in the temporary directory.
fn scratch(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "armctl-mutated-log-{}-{tag}.csv",
        std::process::id()
    ))
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: f64, len: usize },
    Duplicate { at: f64, len: usize },
    Garbage { cell: f64, value: String },
}

fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "", "nan", "inf", "-inf", "1e308", "1e999", "-0", "q_j1", "t", "\"", "\"a,b\"", ",",
            "\n", "\r\n", "0x1", "1,2", "\u{feff}", "q_j3",
        ])
        .prop_map(str::to_string),
        "\\PC{0,20}",
        (3000usize..5000).prop_map(|n| "9".repeat(n)),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0, 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0, 1usize..400).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (0.0..1.0, garbage()).prop_map(|(cell, value)| Mutation::Garbage { cell, value }),
    ]
}

/// The character boundary at or before the fraction `at` of the text.
fn boundary(text: &str, at: f64) -> usize {
    let mut i = ((text.len() as f64 * at) as usize).min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(text: &mut String, mutation: &Mutation) {
    match mutation {
        Mutation::Delete { at, len } | Mutation::Duplicate { at, len } => {
            let start = boundary(text, *at);
            let fraction = ((start + len) as f64 / text.len().max(1) as f64).min(1.0);
            let end = boundary(text, fraction).max(start);
            if matches!(mutation, Mutation::Duplicate { .. }) {
                let copy = text[start..end].to_string();
                text.insert_str(end, &copy);
            } else {
                text.replace_range(start..end, "");
            }
        }
        Mutation::Garbage { cell, value } => {
            // The cell after a comma (or the first of the file).
            let mut starts = vec![0];
            starts.extend(text.match_indices(',').map(|(i, _)| i + 1));
            let start = starts[((starts.len() as f64 * cell) as usize).min(starts.len() - 1)];
            let end = text[start..]
                .find([',', '\n'])
                .map_or(text.len(), |e| start + e);
            text.replace_range(start..end, value);
        }
    }
}

fn check_message(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(!message.is_empty());
    let chars = message.chars().count();
    let head: String = message.chars().take(300).collect();
    prop_assert!(chars < MAX_MESSAGE_CHARS, "{chars} chars: {head}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        rng_seed: RngSeed::Fixed(0x4c4f_4753_4d55_5441),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_logs_give_short_errors_never_panics(
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut text = log_text();
        for m in &mutations {
            mutate(&mut text, m);
        }
        let path = scratch("case");
        std::fs::write(&path, &text).unwrap();
        let read = JointLog::read_csv(&path);
        let _ = std::fs::remove_file(&path);
        match read {
            Ok(log) => {
                if let Err(e) = log.check() {
                    check_message(&e)?;
                }
            }
            Err(e) => check_message(&e.to_string())?,
        }
    }
}
