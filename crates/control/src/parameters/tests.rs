use super::*;

fn gains() -> (ParameterSet, Array, Scalar) {
    let mut p = ParameterSet::new(2);
    let kp = p
        .declare_array(
            Declaration::double_array("kp", vec![1.0, 2.0], "gain")
                .per_joint()
                .range(0.0, 100.0),
        )
        .unwrap();
    let lambda = p
        .declare_scalar(
            Declaration::double("lambda", 1.0, "rate")
                .range(0.0, 10.0)
                .read_only(),
        )
        .unwrap();
    (p, kp, lambda)
}

#[test]
fn invalid_values_are_rejected_with_a_reason_naming_the_value_and_the_old_value_kept() {
    let (mut p, kp, _) = gains();
    for (value, reason) in [
        (
            ParameterValue::DoubleArray(vec![1.0]),
            "needs 2 values (one per joint), got 1: [1.0]",
        ),
        (
            ParameterValue::DoubleArray(vec![1.0, -1.0]),
            "-1 is outside [0, 100]",
        ),
        (
            ParameterValue::DoubleArray(vec![1.0, f64::NAN]),
            "NaN is not a finite number",
        ),
        (
            ParameterValue::Double(3.0),
            "expected double array, got double 3.0",
        ),
    ] {
        let e = p.set("kp", value).unwrap_err();
        assert!(e.to_string().contains(reason), "{e}");
        assert!(e.to_string().contains("'kp'"), "{e}");
        assert_eq!(&p[kp], &[1.0, 2.0]);
        assert_eq!(
            p.get("kp"),
            Some(&ParameterValue::DoubleArray(vec![1.0, 2.0]))
        );
    }
    assert!(matches!(
        p.set("kq", ParameterValue::Double(1.0)),
        Err(ControlError::UnknownParameter { .. })
    ));
}

#[test]
fn validation_widens_integers_and_checks_lengths_choices_and_types() {
    let d = Declaration::double("x", 0.0, "x").range(-1.0, 1.0);
    assert_eq!(
        d.validate(&ParameterValue::Integer(1), 0),
        Ok(ParameterValue::Double(1.0))
    );
    assert!(d
        .validate(&ParameterValue::Integer(2), 0)
        .unwrap_err()
        .contains("2 is outside [-1, 1]"));
    let cartesian = Declaration::double_array("k", vec![0.0; 6], "k").length(6);
    assert!(cartesian
        .validate(&ParameterValue::DoubleArray(vec![1.0; 7]), 7)
        .unwrap_err()
        .contains("needs 6 values, got 7"));
    let mode = Declaration::string("mode", "a", "m").choices(&["a", "b"]);
    assert!(mode
        .validate(&ParameterValue::String("c".into()), 0)
        .unwrap_err()
        .contains("'c' is not one of a, b"));
    let names = Declaration::string_array("joints", vec![], "j");
    assert_eq!(
        names.validate(&ParameterValue::DoubleArray(vec![]), 0),
        Ok(ParameterValue::StringArray(vec![]))
    );
    let count = Declaration::integer("n", 0, "n").range(0.0, 10.0);
    assert!(count
        .validate(&ParameterValue::Integer(11), 0)
        .unwrap_err()
        .contains("11 is outside"));
    assert!(Declaration::bool("b", true, "b")
        .validate(&ParameterValue::BoolArray(vec![true]), 0)
        .unwrap_err()
        .contains("expected bool, got bool array [true]"));
}

#[test]
fn declarations_are_checked_once_at_construction() {
    let mut p = ParameterSet::new(3);
    let e = p
        .declare(Declaration::double_array("kp", vec![1.0; 2], "gain").per_joint())
        .unwrap_err();
    assert!(e.to_string().contains("default: needs 3 values"), "{e}");
    p.declare(Declaration::double("a", 1.0, "a")).unwrap();
    assert!(p.declare(Declaration::double("a", 1.0, "a")).is_err());
    assert!(p
        .declare_scalar(Declaration::string("s", "x", "s"))
        .is_err());
    assert!(p
        .declare_array(Declaration::double_array("any", vec![], "any"))
        .is_err());
    assert!(p
        .declarations()
        .iter()
        .all(|d| d.name != "s" && d.name != "any"));
}

#[test]
fn handles_read_the_effective_values() {
    let mut p = ParameterSet::new(2);
    let a = p
        .declare_scalar(Declaration::double("a", 1.5, "a"))
        .unwrap();
    p.declare(Declaration::string("mode", "x", "m")).unwrap();
    let k = p
        .declare_array(Declaration::double_array("k", vec![1.0, 2.0, 3.0], "k").length(3))
        .unwrap();
    let b = p
        .declare_scalar(Declaration::double("b", -2.0, "b"))
        .unwrap();
    assert_eq!((p[a], &p[k], p[b]), (1.5, &[1.0, 2.0, 3.0][..], -2.0));
    assert_eq!(p.values("k"), &[1.0, 2.0, 3.0]);
    assert_eq!(p.values("mode"), &[] as &[f64]);
    p.set("b", ParameterValue::Integer(4)).unwrap();
    p.settle();
    assert_eq!(p[b], 4.0);
    assert_eq!(p.get("b"), Some(&ParameterValue::Double(4.0)));
    assert_eq!(p.target(k), &[1.0, 2.0, 3.0]);
}

#[test]
fn live_values_ramp_and_structural_ones_jump() {
    let (mut p, kp, lambda) = gains();
    p.set("kp", ParameterValue::DoubleArray(vec![11.0, 2.0]))
        .unwrap();
    assert_eq!(p[kp][0], 1.0, "nothing changes before the next step");
    assert_eq!(p.target(kp), &[11.0, 2.0]);
    p.advance(0.01);
    let first = p[kp][0];
    assert!(
        (first - (1.0 + 10.0 * 0.01 / DEFAULT_RAMP_TIME)).abs() < 1e-12,
        "{first}"
    );
    for _ in 0..1000 {
        p.advance(0.01);
    }
    assert!((p[kp][0] - 11.0).abs() < 1e-9);
    p.set("lambda", ParameterValue::Double(5.0)).unwrap();
    assert_eq!(p[lambda], 5.0);
}
