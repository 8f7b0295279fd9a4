//! The true arm behind a bundled URDF, for the commissioning tests: the URDF's inertials
//! moved, and joint friction the URDF lacks.

/// `text` with `attribute="value"` replaced by `change(value)` at each occurrence.
fn edit_attribute(text: &str, attribute: &str, change: impl Fn(&str) -> String) -> String {
    let key = format!("{attribute}=\"");
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(&key) {
        let value_start = start + key.len();
        let end = value_start + rest[value_start..].find('"').unwrap();
        out += &rest[..value_start];
        out += &change(&rest[value_start..end]);
        rest = &rest[end..];
    }
    out + rest
}

/// The true arm behind a URDF: each link's centre of mass shifted by 1 to 1.5 cm (alternating
/// directions) and its principal inertias 20 % larger (still a body: the off-diagonal terms
/// kept, the triangle inequalities scale).
pub(crate) fn true_arm_urdf(urdf: &str) -> String {
    let mut out = String::new();
    for (k, piece) in urdf.split("<inertial>").enumerate() {
        if k == 0 {
            out += piece;
            continue;
        }
        let (inertial, rest) = piece.split_once("</inertial>").unwrap();
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let shifted = edit_attribute(inertial, "xyz", |v| {
            let xyz: Vec<f64> = v.split_whitespace().map(|x| x.parse().unwrap()).collect();
            let shift = [0.01 * sign, -0.01 * sign, 0.015 * sign];
            format!(
                "{} {} {}",
                xyz[0] + shift[0],
                xyz[1] + shift[1],
                xyz[2] + shift[2]
            )
        });
        let mut scaled = shifted;
        for axis in ["ixx", "iyy", "izz"] {
            scaled = edit_attribute(&scaled, axis, |v| {
                format!("{}", 1.2 * v.parse::<f64>().unwrap())
            });
        }
        out += &format!("<inertial>{scaled}</inertial>{rest}");
    }
    out
}

/// `urdf` with `<dynamics damping friction>` on its moving joints, in order (Coulomb `friction`
/// N m, viscous `damping` N m s/rad each).
pub(crate) fn with_friction(urdf: &str, damping: &[f64], friction: &[f64]) -> String {
    let mut out = String::new();
    let mut k = 0;
    for piece in urdf.split_inclusive("</joint>") {
        let moving = piece.contains("type=\"revolute\"") || piece.contains("type=\"continuous\"");
        if moving && k < friction.len() {
            let dynamics = format!(
                "<dynamics damping=\"{}\" friction=\"{}\"/></joint>",
                damping[k], friction[k]
            );
            out += &piece.replacen("</joint>", &dynamics, 1);
            k += 1;
        } else {
            out += piece;
        }
    }
    assert_eq!(k, friction.len(), "one friction per moving joint");
    out
}

/// The held-out effort error `armctl commission` printed, % of the worst joint's effort range.
pub(crate) fn held_out_share(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains("effort prediction error at most"))
        .unwrap_or_else(|| panic!("no held-out error in:\n{stdout}"));
    let number = line
        .split("at most ")
        .nth(1)
        .and_then(|r| r.split(' ').next());
    number
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

/// A generated arm of the test population and the true arm behind it, for the commissioning.
pub(crate) struct GeneratedTrueArm {
    /// The generated URDF (no friction: the true arm's is to be found).
    pub urdf: String,
    /// The true arm's viscous friction per joint, 0.5 % of each effort limit per rad/s.
    pub viscous: Vec<f64>,
    /// The true arm's Coulomb friction per joint, 2 % of each effort limit.
    pub coulomb: Vec<f64>,
    /// The tool's mass, kg, sized to the wrist: its weight at 0.25 m is 8 % of the smallest
    /// effort limit.
    pub tool: f64,
}

/// Generated arm `seed` of the test population: its light wrist (down to about 1e-5 kg m^2
/// about its last axis) and the true arm behind it.
pub(crate) fn generated_true_arm(seed: u64) -> GeneratedTrueArm {
    let generated = armctl_model::test_support::random_arm::RandomArm::generate(seed);
    assert!(
        !generated.damped,
        "the URDF has no friction: the true arm's is to be found"
    );
    let robot =
        armctl_model::Robot::from_urdf_str(&generated.urdf, &armctl_model::ChainOptions::default())
            .unwrap();
    let limits: Vec<f64> = robot.joints().iter().map(|j| j.limits.effort).collect();
    let smallest = limits.iter().fold(f64::INFINITY, |m, l| m.min(*l));
    GeneratedTrueArm {
        viscous: limits.iter().map(|l| 0.005 * l).collect(),
        coulomb: limits.iter().map(|l| 0.02 * l).collect(),
        tool: 0.08 * smallest / (9.81 * 0.25),
        urdf: generated.urdf,
    }
}

/// The Panda's joint friction as Gaz et al. (IEEE RA-L 2019) identified it: Coulomb, N m.
pub(crate) const PANDA_COULOMB: [f64; 7] = [0.2731, 0.4361, 0.3203, 0.6397, 0.4195, 0.1515, 0.2824];

/// Their friction's asymmetry, N m (`config/commissioning/panda_true_arm.yaml` derives it).
pub(crate) const PANDA_OFFSET: [f64; 7] =
    [-0.0275, -0.0509, 0.0735, -0.0645, -0.0457, 0.0270, -0.0052];

/// The Coulomb friction a commissioned file identified, per joint.
pub(crate) fn identified_coulomb(file: &std::path::Path) -> Vec<f64> {
    identified_list(file, "model_coulomb")
}

/// The friction offset a commissioned file identified, per joint.
pub(crate) fn identified_offset(file: &std::path::Path) -> Vec<f64> {
    identified_list(file, "model_friction_offset")
}

/// Whether each identified offset is within `tolerance` N m of `truth`'s.
pub(crate) fn check_offset(values: &[f64], truth: &[f64], tolerance: f64) {
    assert_eq!(values.len(), truth.len(), "{values:?}");
    for (found, truth_j) in values.iter().zip(truth) {
        assert!(
            (found - truth_j).abs() < tolerance,
            "friction offset {values:?} against {truth:?}"
        );
    }
}

/// The list `key` of a commissioned file.
fn identified_list(file: &std::path::Path, key: &str) -> Vec<f64> {
    let identified = std::fs::read_to_string(file).unwrap();
    let line = identified
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in {identified}"));
    line.split(['[', ']'])
        .nth(1)
        .unwrap()
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

/// Whether each identified Coulomb level is within 10 % (and 0.02 N m) of the Panda's.
pub(crate) fn check_panda_coulomb(values: &[f64]) {
    for (found, truth) in values.iter().zip(PANDA_COULOMB) {
        assert!(
            (found - truth).abs() < 0.1 * truth + 0.02,
            "Coulomb {values:?} against {PANDA_COULOMB:?}"
        );
    }
}
