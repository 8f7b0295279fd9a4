//! The friction offset (Gautier's `Off_j`): a joint that slides one way harder than the other.
//! The Panda's own asymmetry, as Gaz et al. (IEEE RA-L 2019) measured it, is identified on
//! noise-free data, explains the held-out efforts better than Coulomb friction alone, and
//! computed torque compensating it tracks better.

use armctl_ident::{identify, IdentifyOptions};
use armctl_model::Robot;

use super::{exciting, panda, record_with_friction, tracking_error_with_friction};

/// Gaz et al.'s Coulomb levels and their asymmetry (`phi1 / 2` and `phi1 (1 - 2 s) / 2`,
/// `s = 1 / (1 + exp(-phi2 phi3))`), N m, with viscous friction of this test's own.
fn skewed_plant() -> (Robot, Vec<f64>) {
    let viscous = vec![0.05, 0.05, 0.05, 0.05, 0.02, 0.02, 0.02];
    let coulomb = vec![0.2731, 0.4361, 0.3203, 0.6397, 0.4195, 0.1515, 0.2824];
    let offset = vec![-0.0275, -0.0509, 0.0735, -0.0645, -0.0457, 0.0270, -0.0052];
    let plant = panda()
        .with_friction(&viscous, &coulomb)
        .unwrap()
        .with_friction_offset(&offset)
        .unwrap();
    (plant, offset)
}

#[test]
fn the_friction_offset_is_identified_and_compensated() {
    let (plant, offset) = skewed_plant();
    let log = record_with_friction(&plant, None, &exciting(&plant), 0.0);
    let with = |offset: bool| IdentifyOptions {
        friction: true,
        friction_offset: offset,
        ..IdentifyOptions::default()
    };
    let found = identify(&plant, &log, &with(true)).unwrap();
    let without = identify(&plant, &log, &with(false)).unwrap();
    let worst = offset
        .iter()
        .zip(&found.friction_offset)
        .map(|(truth, got)| (truth - got).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "offset {offset:?}\nidentified {:.4?}, at most {worst:.1e} off",
        found.friction_offset
    );
    assert!(worst < 5e-4, "{:?} vs {offset:?}", found.friction_offset);
    assert!(
        found.offset_limited.is_empty(),
        "{:?}",
        found.offset_limited
    );
    for (truth, got) in plant.joints().iter().zip(&found.coulomb) {
        assert!((truth.friction.coulomb - got).abs() < 3e-3, "{got}");
    }
    eprintln!(
        "held-out effort error: {:.3}% with the offset, {:.3}% without",
        100.0 * found.holdout_overall,
        100.0 * without.holdout_overall
    );
    assert!(found.holdout_overall < 0.2 * without.holdout_overall);
    let model = |found: &armctl_ident::Identification| found.model().apply(&plant).unwrap();
    let written = found.model().to_ros_parameters("test");
    assert!(
        written.contains("model_friction_offset: [-0.027"),
        "{written}"
    );
    let (skewed, symmetric) = (
        tracking_error_with_friction(&plant, &model(&found)),
        tracking_error_with_friction(&plant, &model(&without)),
    );
    eprintln!(
        "computed torque RMS error: {skewed:.3e} rad with the offset, {symmetric:.3e} rad without"
    );
    assert!(skewed < 0.2 * symmetric, "{skewed:e} vs {symmetric:e}");
}
