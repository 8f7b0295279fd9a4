//! Property test: the bundled URDFs, mutated (a character range deleted or duplicated, an
//! attribute value swapped for garbage), never make the parser panic, and every error it gives
//! is short (a huge value is not echoed), non-empty, and placed at a line of the text when it
//! is about malformed XML or URDF.
//!
//! The cases come from a fixed seed, so every run checks the same files.

use armctl_model::test_support::mutation::{check_message, mutate, mutation, XML_ATTRIBUTES};
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

fn check_error(text: &str, e: &ModelError) -> Result<(), TestCaseError> {
    let message = e.to_string();
    check_message(&message, MAX_MESSAGE_CHARS)?;
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
        mutations in prop::collection::vec(mutation(garbage(), 300, 3000), 1..4),
    ) {
        let mut text = BUNDLED[file].to_string();
        for m in &mutations {
            mutate(&mut text, m, &XML_ATTRIBUTES);
        }
        if let Err(e) = Robot::from_urdf_str(&text, &ChainOptions::default()) {
            check_error(&text, &e)?;
        }
    }
}
