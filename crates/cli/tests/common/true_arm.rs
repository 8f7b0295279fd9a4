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
