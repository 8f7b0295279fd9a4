//! Property test: a joint log written by armctl (`JointLog::write_csv`), mutated (a character
//! range deleted or duplicated, a cell swapped for garbage), is read back and checked as
//! `armctl identify` reads it. Nothing panics, and every refusal is a short message.
//!
//! The cases come from a fixed seed, so every run checks the same files.

use std::path::PathBuf;

use armctl_ident::JointLog;
use armctl_model::test_support::mutation::{check_message, mutate, mutation, CSV_CELLS};
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

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        rng_seed: RngSeed::Fixed(0x4c4f_4753_4d55_5441),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_logs_give_short_errors_never_panics(
        mutations in prop::collection::vec(mutation(garbage(), 200, 400), 1..4),
    ) {
        let mut text = log_text();
        for m in &mutations {
            mutate(&mut text, m, &CSV_CELLS);
        }
        let path = scratch("case");
        std::fs::write(&path, &text).unwrap();
        let read = JointLog::read_csv(&path);
        let _ = std::fs::remove_file(&path);
        match read {
            Ok(log) => {
                if let Err(e) = log.check() {
                    check_message(&e, MAX_MESSAGE_CHARS)?;
                }
            }
            Err(e) => check_message(&e.to_string(), MAX_MESSAGE_CHARS)?,
        }
    }
}
