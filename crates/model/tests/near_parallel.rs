//! Axes meant to be parallel but written with truncated constants (1.5708 for pi/2).

use armctl_model::{urdf_to_robot, ChainOptions};

const URDF: &str = r#"<robot name="truncated">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0.05" rpy="1.5708 0 0"/><axis xyz="0 2 0"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0.3 0 0" rpy="-1.5708 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>"#;

#[test]
fn default_tolerance_keeps_exact_geometry_and_warns() {
    let c = urdf_to_robot(URDF, &ChainOptions::default()).unwrap();
    assert!(c.report.fk_residual < 1e-10, "{}", c.report.fk_residual);
    let w = &c.report.warnings;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("'j1' and 'j2'") && w[0].contains("nearly parallel"),
        "{w:?}"
    );
    assert!(
        w[1].contains("'j2' and 'j3'") && w[1].contains("tolerance 4e-5"),
        "{w:?}"
    );
}

#[test]
fn looser_tolerance_treats_them_as_parallel_and_reports_the_cost() {
    let options = ChainOptions {
        tolerance: 1e-5,
        ..ChainOptions::default()
    };
    let c = urdf_to_robot(URDF, &options).unwrap();
    assert!(c.report.warnings.is_empty(), "{:?}", c.report.warnings);
    let j2 = &c.robot.joints()[1].mdh;
    assert!(
        (j2.a() - 0.4).abs() < 1e-5 && j2.alpha().abs() < 1e-5,
        "a {} alpha {}",
        j2.a(),
        j2.alpha()
    );
    assert!(j2.d().abs() < 1e-5, "d {}", j2.d());
    // The snap costs about angle x reach, and the report says so.
    assert!(
        c.report.fk_residual > 1e-8 && c.report.fk_residual < 1e-5,
        "{}",
        c.report.fk_residual
    );
}

#[test]
fn a_tolerance_that_moves_the_tip_is_refused() {
    // j2 0.5 m above j1's base and its axis 4.2e-3 rad from parallel to j1's: a tolerance of
    // 1e-2 snaps them and moves the tip by 2.1e-3 m, a different arm.
    let skewed = URDF
        .replace(r#"rpy="1.5708 0 0""#, r#"rpy="1.575 0 0""#)
        .replace("0.4 0 0.05", "0.4 0 0.5");
    let loose = ChainOptions {
        tolerance: 1e-2,
        ..ChainOptions::default()
    };
    let error = urdf_to_robot(&skewed, &loose).unwrap_err().to_string();
    assert!(
        error.contains("tip pose differs") && error.contains("use a smaller tolerance"),
        "{error}"
    );
    assert!(urdf_to_robot(&skewed, &ChainOptions::default()).is_ok());
    for bad in [0.0, -1e-9, 0.5, f64::NAN, f64::INFINITY] {
        let options = ChainOptions {
            tolerance: bad,
            ..ChainOptions::default()
        };
        let error = urdf_to_robot(URDF, &options).unwrap_err().to_string();
        assert!(error.contains("outside (0, 1e-2]"), "{bad}: {error}");
    }
}
