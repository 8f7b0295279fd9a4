//! Property test: the bundled parameter files (`config/*.yaml`), mutated (a character range
//! deleted or duplicated, a value swapped for garbage), are read and applied as controller_node
//! applies them at start, with the bundled URDF of the file's arm. Nothing panics, and every
//! refusal is a short message (a huge value is not echoed whole).
//!
//! The cases come from a fixed seed, so every run checks the same files.

use armctl_control::ParameterValue;
use armctl_model::test_support::mutation::{check_message, mutate, mutation, YAML_VALUES};
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::params_file::parameters_for_node;
use armctl_runtime::startup::NodeStart;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// (file text, its arm's URDF).
const FILES: [(&str, &str); 5] = [
    (
        include_str!("../../../config/panda_computed_torque.yaml"),
        "panda.urdf",
    ),
    (
        include_str!("../../../config/panda_slotine_li_adaptive.yaml"),
        "panda.urdf",
    ),
    (
        include_str!("../../../config/panda_cartesian_impedance.yaml"),
        "panda.urdf",
    ),
    (
        include_str!("../../../config/planar_2link_computed_torque.yaml"),
        "planar_2link.urdf",
    ),
    (
        include_str!("../../../config/puma560_computed_torque.yaml"),
        "puma560.urdf",
    ),
];

/// Longest error message accepted: a sentence or two, whatever the input.
const MAX_MESSAGE_CHARS: usize = 2000;

fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "nan",
            ".nan",
            ".inf",
            "-.inf",
            "1e308",
            "-1",
            "0",
            "~",
            "[]",
            "[1, 2]",
            "[.nan, 1]",
            "{a: 1}",
            "'x'",
            "\"\"",
            "&a 1",
            "*a",
            "!!binary AAAA",
            "true",
            "9223372036854775807",
            "-9223372036854775808",
            "1e999",
            "[[1]]",
            "zero",
            "computed_torque",
            "slotine_li_adaptive",
            "gravity",
        ])
        .prop_map(str::to_string),
        "\\PC{0,20}",
        // Far longer than any message may be: must not be echoed whole.
        (3000usize..5000).prop_map(|n| "9".repeat(n)),
        (3000usize..5000).prop_map(|n| format!("[{}]", vec!["1.0"; n].join(", "))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        rng_seed: RngSeed::Fixed(0x5041_5241_4d53_4649),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_parameter_files_give_short_errors_never_panics(
        file in 0..FILES.len(),
        mutations in prop::collection::vec(mutation(garbage(), 200, 400), 1..4),
    ) {
        let (original, urdf) = FILES[file];
        let mut text = original.to_string();
        for m in &mutations {
            mutate(&mut text, m, &YAML_VALUES);
        }
        let values = match parameters_for_node(&text, "mutated.yaml", "", "controller_node") {
            Ok(values) => values,
            Err(e) => return check_message(&e.to_string(), MAX_MESSAGE_CHARS),
        };
        let urdf_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/").to_string() + urdf;
        let mut start_values = vec![("urdf_path".to_string(), ParameterValue::String(urdf_path))];
        start_values.extend(values);
        let start = NodeStart {
            name: "controller_node".into(),
            namespace: String::new(),
            remaps: vec![],
            values: start_values,
        };
        if let Err(e) = GroupLoop::lone(&start) {
            check_message(&e.to_string(), MAX_MESSAGE_CHARS)?;
        }
    }
}
