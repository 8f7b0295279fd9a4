//! Property test: the bundled URDFs, mutated (a character range deleted or duplicated, an
//! attribute value swapped for garbage), never make the parser panic, and every error it gives
//! is short (a huge value is not echoed), non-empty, and placed at a line of the text when it
//! is about malformed XML or URDF.
//!
//! The cases come from a fixed seed, so every run checks the same files.

use armctl_model::{ChainOptions, ModelError, Robot};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const BUNDLED: [&str; 4] = [
    include_str!("../../../urdf/panda.urdf"),
    include_str!("../../../urdf/ur5e.urdf"),
    include_str!("../../../urdf/puma560.urdf"),
    include_str!("../../../urdf/planar_2link.urdf"),
];

/// Longest error message accepted: a sentence or two, whatever the input.
const MAX_MESSAGE_CHARS: usize = 2000;

/// One change to the text; positions are fractions of its length, so they fit any file.
#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: f64, len: usize },
    Duplicate { at: f64, len: usize },
    Garbage { attribute: f64, value: String },
}

fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "nan",
            "-inf",
            "1e999",
            "-1",
            "0 0",
            "1 2 3 4",
            "${mass1}",
            "$(find arm)",
            "&bogus;",
            "REVOLUTE",
            "a\"b",
            "<",
            "]]>",
            "0x10",
            "1,5",
            "\u{fffd}\u{221e}",
        ])
        .prop_map(str::to_string),
        "\\PC{0,30}",
        // Far longer than any message may be: must not be echoed whole.
        (3000usize..5000).prop_map(|n| "9".repeat(n)),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0, 1usize..300).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0, 1usize..3000).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (0.0..1.0, garbage()).prop_map(|(attribute, value)| Mutation::Garbage { attribute, value }),
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

/// `start..start + len`, shrunk to the text and to character boundaries.
fn range(text: &str, at: f64, len: usize) -> std::ops::Range<usize> {
    let start = boundary(text, at);
    let end_fraction = (start + len) as f64 / text.len().max(1) as f64;
    start..boundary(text, end_fraction.min(1.0)).max(start)
}

fn mutate(text: &mut String, mutation: &Mutation) {
    match mutation {
        Mutation::Delete { at, len } => {
            let r = range(text, *at, *len);
            text.replace_range(r, "");
        }
        Mutation::Duplicate { at, len } => {
            let r = range(text, *at, *len);
            let copy = text[r.clone()].to_string();
            text.insert_str(r.end, &copy);
        }
        Mutation::Garbage { attribute, value } => {
            let values: Vec<usize> = text.match_indices("=\"").map(|(i, _)| i + 2).collect();
            if values.is_empty() {
                return;
            }
            let start = values[((values.len() as f64 * attribute) as usize).min(values.len() - 1)];
            let end = text[start..].find('"').map_or(text.len(), |e| start + e);
            text.replace_range(start..end, value);
        }
    }
}

fn check_error(text: &str, e: &ModelError) -> Result<(), TestCaseError> {
    let message = e.to_string();
    prop_assert!(!message.is_empty());
    prop_assert!(
        message.chars().count() < MAX_MESSAGE_CHARS,
        "{} chars: {}",
        message.chars().count(),
        &message[..message
            .char_indices()
            .nth(300)
            .map_or(message.len(), |(i, _)| i)]
    );
    if matches!(
        e.unlocated(),
        ModelError::Malformed { .. } | ModelError::Xacro { .. }
    ) {
        let line = e.line();
        prop_assert!(line.is_some(), "not placed: {message}");
        prop_assert!(line <= Some(text.lines().count() + 1), "{message}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: RngSeed::Fixed(0x5552_4446_4d55_5441),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_urdfs_give_short_placed_errors_never_panics(
        file in 0..BUNDLED.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut text = BUNDLED[file].to_string();
        for m in &mutations {
            mutate(&mut text, m);
        }
        if let Err(e) = Robot::from_urdf_str(&text, &ChainOptions::default()) {
            check_error(&text, &e)?;
        }
    }
}
