//! Every kind of bad URDF gives an error naming the element at fault, never a panic.

use armctl_model::{urdf_to_robot, BranchPolicy, ChainOptions, ModelError, Robot};

const LIMIT: &str = r#"<limit lower="-2" upper="2" effort="10" velocity="1"/>"#;

fn joint_with(name: &str, kind: &str, parent: &str, child: &str, extra: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{LIMIT}{extra}</joint>"#
    )
}

fn joint(name: &str, kind: &str, parent: &str, child: &str) -> String {
    joint_with(name, kind, parent, child, "")
}

fn link(name: &str) -> String {
    format!(
        r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>"#
    )
}

fn robot(body: &str) -> String {
    format!("<robot name=\"bad\">{body}</robot>")
}

/// A valid two-joint arm with a piece appended.
fn arm(extra: &str) -> String {
    robot(&format!(
        "{}{}{}{}{}{extra}",
        link("base"),
        link("a"),
        link("b"),
        joint("j1", "revolute", "base", "a"),
        joint("j2", "revolute", "a", "b")
    ))
}

fn error(text: &str) -> ModelError {
    error_with(text, &ChainOptions::default())
}

fn error_with(text: &str, options: &ChainOptions) -> ModelError {
    match urdf_to_robot(text, options) {
        Ok(_) => panic!("accepted bad URDF:\n{text}"),
        Err(e) => e,
    }
}

fn says(e: &ModelError, words: &[&str]) {
    let message = e.to_string();
    for w in words {
        assert!(message.contains(w), "'{message}' does not mention '{w}'");
    }
}

#[test]
fn valid_arm_is_accepted() {
    assert_eq!(
        urdf_to_robot(&arm(""), &ChainOptions::default())
            .unwrap()
            .robot
            .dof(),
        2
    );
}

#[test]
fn malformed_xml() {
    let e = error("<robot name=\"x\"><link name=\"a\"></robot>");
    assert!(matches!(e.unlocated(), ModelError::Malformed { .. }), "{e}");
    let e = error("not xml at all");
    assert!(matches!(e.unlocated(), ModelError::Malformed { .. }), "{e}");
}

#[test]
fn joint_without_child_element() {
    let e = error(&arm(
        r#"<joint name="j3" type="fixed"><parent link="b"/></joint>"#,
    ));
    assert!(matches!(e.unlocated(), ModelError::Malformed { .. }), "{e}");
    says(&e, &["child"]);
}

#[test]
fn missing_parent_link() {
    let e = error(&arm(&joint("j3", "fixed", "ghost", "c")));
    assert!(
        matches!(e.unlocated(), ModelError::MissingLink { .. }),
        "{e}"
    );
    says(&e, &["j3", "parent", "ghost"]);
}

#[test]
fn missing_child_link() {
    let e = error(&arm(&joint("j3", "fixed", "b", "ghost")));
    says(&e, &["j3", "child", "ghost"]);
}

#[test]
fn cycle() {
    let text = robot(&format!(
        "{}{}{}{}{}{}",
        link("base"),
        link("a"),
        link("b"),
        joint("j1", "revolute", "base", "a"),
        joint("j2", "revolute", "a", "b"),
        joint("back", "fixed", "b", "a"),
    ));
    // The loop makes link "a" a child twice; the error names it and both joints.
    says(&error(&text), &["'a'", "j1", "back"]);
    let pure_loop = robot(&format!(
        "{}{}{}{}",
        link("a"),
        link("b"),
        joint("ab", "revolute", "a", "b"),
        joint("ba", "revolute", "b", "a"),
    ));
    let e = error(&pure_loop);
    assert!(matches!(e.unlocated(), ModelError::Cycle { .. }), "{e}");
    says(&e, &["a", "b"]);
}

#[test]
fn unknown_tip_and_base() {
    let options = ChainOptions {
        tip_link: Some("nowhere".into()),
        ..ChainOptions::default()
    };
    says(&error_with(&arm(""), &options), &["tip", "nowhere"]);
    let options = ChainOptions {
        base_link: Some("nobase".into()),
        ..ChainOptions::default()
    };
    says(&error_with(&arm(""), &options), &["base", "nobase"]);
}

#[test]
fn tip_not_below_base() {
    let options = ChainOptions {
        base_link: Some("b".into()),
        tip_link: Some("a".into()),
        ..ChainOptions::default()
    };
    let e = error_with(&arm(""), &options);
    assert!(
        matches!(e.unlocated(), ModelError::TipNotBelowBase { .. }),
        "{e}"
    );
}

#[test]
fn tree_without_unique_chain() {
    let text = arm(&format!(
        "{}{}",
        link("c"),
        joint("j3", "revolute", "a", "c")
    ));
    let e = error(&text);
    assert!(
        matches!(e.unlocated(), ModelError::AmbiguousTip { .. }),
        "{e}"
    );
    says(&e, &["b", "c", "--tip"]);
    // Naming the tip resolves it; the other branch is locked with its mass kept.
    let options = ChainOptions {
        tip_link: Some("b".into()),
        ..ChainOptions::default()
    };
    let conversion = urdf_to_robot(&text, &options).unwrap();
    assert_eq!(
        conversion.report.chain.locked,
        vec![("j3".to_string(), 0.0)]
    );
    assert_eq!(conversion.robot.links()[0].mass, 2.0);
    let dropped = ChainOptions {
        branches: BranchPolicy::Drop,
        ..options
    };
    let conversion = urdf_to_robot(&text, &dropped).unwrap();
    assert_eq!(conversion.report.chain.dropped, vec!["c".to_string()]);
    assert_eq!(conversion.robot.links()[0].mass, 1.0);
}

#[test]
fn no_moving_joint() {
    let text = robot(&format!(
        "{}{}{}",
        link("base"),
        link("a"),
        joint("j", "fixed", "base", "a")
    ));
    assert!(matches!(error(&text), ModelError::NoMovingJoint { .. }));
}

#[test]
fn negative_mass() {
    let text = arm(
        r#"<link name="c"><inertial><mass value="-1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
    );
    let e = error(&text);
    assert!(
        matches!(e.unlocated(), ModelError::NegativeMass { .. }),
        "{e}"
    );
    says(&e, &["'c'", "-1"]);
}

#[test]
fn non_positive_definite_inertia() {
    let text = arm(
        r#"<link name="c"><inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
    );
    let e = error(&text);
    assert!(
        matches!(e.unlocated(), ModelError::InertiaNotPositive { .. }),
        "{e}"
    );
    says(&e, &["'c'", "inertia"]);
}

#[test]
fn nan_in_a_number() {
    let cases = [
        (
            r#"<link name="c"><inertial><origin xyz="0 NaN 0"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
            "origin xyz",
        ),
        (
            r#"<link name="c"><inertial><mass value="nan"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
            "mass",
        ),
        (
            r#"<link name="c"><inertial><mass value="1"/><inertia ixx="inf" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
            "inertia",
        ),
    ];
    for (extra, word) in cases {
        let e = error(&arm(extra));
        assert!(matches!(e.unlocated(), ModelError::NonFinite { .. }), "{e}");
        says(&e, &["link 'c'", word]);
    }
    let bad_origin = arm("").replacen(
        r#"<origin xyz="0 0 0.1"/>"#,
        r#"<origin xyz="0 0 0.1" rpy="0 nan 0"/>"#,
        1,
    );
    says(&error(&bad_origin), &["joint 'j1'", "origin rpy"]);
    let bad_axis = arm("").replacen(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 NaN 1"/>"#, 1);
    says(&error(&bad_axis), &["joint 'j1'", "axis"]);
    let bad_limit = arm("").replacen(r#"effort="10""#, r#"effort="nan""#, 1);
    says(&error(&bad_limit), &["j1"]);
}

#[test]
fn duplicate_names() {
    says(&error(&arm(&link("a"))), &["duplicate link", "'a'"]);
    says(
        &error(&arm(&format!(
            "{}{}",
            link("c"),
            joint("j1", "fixed", "b", "c")
        ))),
        &["duplicate joint", "'j1'"],
    );
}

#[test]
fn several_roots() {
    let e = error(&arm(&link("floating_piece")));
    assert!(matches!(e.unlocated(), ModelError::Roots { .. }), "{e}");
    says(&e, &["base", "floating_piece"]);
}

#[test]
fn unsupported_joint_types() {
    for kind in ["floating", "planar"] {
        let e = error(&arm(&format!(
            "{}{}",
            link("c"),
            joint("j3", kind, "b", "c")
        )));
        says(&e, &["j3", kind]);
    }
}

#[test]
fn mimic_joint_on_chain_is_refused() {
    let text = robot(&format!(
        "{}{}{}{}{}",
        link("base"),
        link("a"),
        link("b"),
        joint("j1", "revolute", "base", "a"),
        joint_with(
            "j2",
            "revolute",
            "a",
            "b",
            r#"<mimic joint="j1" multiplier="2"/>"#
        )
    ));
    let e = error(&text);
    assert!(
        matches!(e.unlocated(), ModelError::MimicOnChain { .. }),
        "{e}"
    );
    says(&e, &["j2", "j1"]);
}

#[test]
fn mimic_joint_off_chain_follows_its_locked_master() {
    let text = arm(&format!(
        "{}{}{}{}",
        link("f1"),
        link("f2"),
        joint("finger1", "prismatic", "b", "f1"),
        joint_with(
            "finger2",
            "prismatic",
            "b",
            "f2",
            r#"<mimic joint="finger1" multiplier="-1" offset="0.1"/>"#
        )
    ));
    let mut options = ChainOptions {
        tip_link: Some("b".into()),
        ..ChainOptions::default()
    };
    options.locked_positions.insert("finger1".into(), 0.5);
    let locked = urdf_to_robot(&text, &options).unwrap().report.chain.locked;
    assert!(locked.contains(&("finger1".to_string(), 0.5)), "{locked:?}");
    assert!(
        locked.contains(&("finger2".to_string(), -0.4)),
        "{locked:?}"
    );
}

#[test]
fn zero_axis_and_missing_limits() {
    let zero = arm("").replacen(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 0 0"/>"#, 1);
    says(&error(&zero), &["j1", "axis"]);
    let no_limit = arm("").replacen(LIMIT, "", 1);
    let e = error(&no_limit);
    assert!(
        matches!(e.unlocated(), ModelError::InvalidLimit { .. }),
        "{e}"
    );
    says(&e, &["j1", "effort"]);
}

#[test]
fn locking_a_chain_joint_is_refused() {
    let mut options = ChainOptions::default();
    options.locked_positions.insert("j1".into(), 0.3);
    says(&error_with(&arm(""), &options), &["j1", "off the chain"]);
}

#[test]
fn missing_file() {
    let e = armctl_model::urdf_file_to_robot(
        std::path::Path::new("/nonexistent/arm.urdf"),
        &ChainOptions::default(),
    )
    .unwrap_err();
    says(&e, &["/nonexistent/arm.urdf"]);
}

/// A chain of `links` links joined by revolute joints, as URDF text.
fn long_chain(links: usize) -> String {
    let mut text = String::from("<robot name=\"long\">\n");
    for i in 0..links {
        text += &format!(
            "<link name=\"l{i}\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"
        );
        if i > 0 {
            text += &format!(
                "<joint name=\"j{i}\" type=\"revolute\"><parent link=\"l{}\"/><child link=\"l{i}\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"1\"/></joint>\n",
                i - 1
            );
        }
    }
    text + "</robot>\n"
}

/// Descriptions too large for any arm are refused by count, before a recursive walk could
/// overflow the stack or the base parameters allocate terabytes; devices and pipes are not read.
#[test]
fn oversized_descriptions_and_non_files_are_refused_by_name() {
    let e = Robot::from_urdf_str(&long_chain(20_000), &ChainOptions::default()).unwrap_err();
    assert!(e.to_string().contains("20000 links; at most 1000"), "{e}");
    let e = Robot::from_urdf_str(&long_chain(100), &ChainOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("99 moving joints in the chain; at most 64"),
        "{e}"
    );
    assert!(Robot::from_urdf_str(&long_chain(60), &ChainOptions::default()).is_ok());
    let e = Robot::from_urdf_file("/dev/zero", &ChainOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

/// The two-joint arm one element a line: `<robot>` on line 1, links base, a, b on lines 2-4,
/// joints j1, j2 on lines 5-6, `extra` from line 7.
fn lined_arm(extra: &str) -> String {
    [
        "<robot name=\"bad\">".to_string(),
        link("base"),
        link("a"),
        link("b"),
        joint("j1", "revolute", "base", "a"),
        joint("j2", "revolute", "a", "b"),
        extra.to_string(),
        "</robot>".to_string(),
    ]
    .join("\n")
}

/// The lined arm with `from` replaced by `to` on line `line` (which must hold it).
fn edited(line: usize, from: &str, to: &str) -> String {
    let arm = lined_arm("");
    let mut lines: Vec<String> = arm.lines().map(str::to_string).collect();
    assert!(lines[line - 1].contains(from), "line {line} lacks {from}");
    lines[line - 1] = lines[line - 1].replacen(from, to, 1);
    lines.join("\n")
}

/// Every malformed URDF gives an error naming the element at fault and the line it starts on
/// (for XML and xacro errors, the line of the fault itself).
#[test]
fn malformed_urdfs_name_the_element_and_the_line() {
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "joint type in the wrong case",
            edited(6, r#"type="revolute""#, r#"type="REVOLUTE""#),
            vec!["line 6: malformed URDF in joint 'j2': unknown variant `REVOLUTE`"],
        ),
        (
            "two-element xyz",
            edited(5, r#"<origin xyz="0 0 0.1"/>"#, r#"<origin xyz="0 0.1"/>"#),
            vec!["line 5: ", "joint 'j1'", "count"],
        ),
        (
            "visual without geometry, over three lines",
            lined_arm("<link name=\"c\">\n  <visual><origin xyz=\"0 0 0\"/></visual>\n</link>"),
            vec!["line 7: ", "link 'c'", "geometry"],
        ),
        (
            "xacro property as a mass",
            edited(3, r#"<mass value="1"/>"#, r#"<mass value="${mass1}"/>"#),
            vec![
                "line 3: ",
                "link 'a'",
                "`${mass1}`",
                "xacro robot.urdf.xacro",
            ],
        ),
        (
            "xacro substitution in a mesh file name",
            lined_arm(
                r#"<link name="c"><visual><geometry><mesh filename="$(find arm)/c.stl"/></geometry></visual></link>"#,
            ),
            vec!["line 7: ", "link 'c'", "`$(find arm)`"],
        ),
        (
            "unclosed link",
            lined_arm(r#"<link name="c">"#),
            vec!["line 7: ", "link 'c'", "`<link>` is not closed", "line 8"],
        ),
        (
            "unclosed tag inside a joint",
            edited(5, r#"<parent link="base"/>"#, r#"<parent link="base">"#),
            vec!["line 5: ", "joint 'j1'", "`<parent>` is not closed"],
        ),
        (
            "joint without parent",
            lined_arm(r#"<joint name="j3" type="fixed"><child link="b"/></joint>"#),
            vec!["line 7: ", "joint 'j3'", "parent"],
        ),
        (
            "non-numeric limit",
            edited(5, r#"effort="10""#, r#"effort="ten""#),
            vec!["line 5: ", "joint 'j1'"],
        ),
        (
            "non-numeric inertia",
            edited(4, r#"ixx="0.1""#, r#"ixx="0,1""#),
            vec!["line 4: ", "link 'b'"],
        ),
        (
            "link without a name",
            lined_arm("<link/>"),
            vec!["line 7: ", "<link>", "name"],
        ),
        (
            "root element misspelt",
            edited(1, "<robot ", "<robt "),
            vec!["line 8: malformed URDF in <robt>: `</robot>` has no matching start tag"],
        ),
        (
            "negative mass (armctl's own check)",
            lined_arm(
                r#"<link name="c"><inertial><mass value="-1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
            ),
            vec!["line 7: link 'c': negative mass"],
        ),
        (
            "NaN in an inertial origin (armctl's own check)",
            lined_arm(
                r#"<link name="c"><inertial><origin xyz="0 NaN 0"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#,
            ),
            vec!["line 7: link 'c' inertial: origin xyz"],
        ),
        (
            "duplicate link, placed at the second",
            lined_arm(&link("a")),
            vec!["line 7: duplicate link name 'a'"],
        ),
        (
            "zero axis",
            edited(6, r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 0 0"/>"#),
            vec!["line 6: joint 'j2': axis"],
        ),
        (
            "joint to a missing link",
            lined_arm(&joint("j3", "fixed", "b", "ghost")),
            vec!["line 7: joint 'j3': child link 'ghost'"],
        ),
        (
            "parent link name of 300 bytes, not echoed",
            edited(6, r#"<parent link="a"/>"#, &format!(r#"<parent link="{}"/>"#, "x".repeat(300))),
            vec!["line 6: joint 'j2' parent link: a name of 300 bytes ('xxxxxxxxxxxxxxxxxxxx...'); at most 256"],
        ),
        (
            "chain joint without limit (chain check)",
            edited(6, LIMIT, ""),
            vec!["line 6: joint 'j2': invalid <limit>"],
        ),
    ];
    for (what, text, words) in &cases {
        let message = error(text).to_string();
        for w in words {
            assert!(
                message.contains(w),
                "{what}: '{message}' does not mention '{w}'"
            );
        }
    }
}

/// On a 1000-link file the element at fault is found by parsing each element once, not by
/// re-parsing the file per element: the last joint is found, at its line.
#[test]
fn the_fault_is_placed_in_a_thousand_link_file() {
    let text = long_chain(1000).replace(
        "name=\"j999\" type=\"revolute\"",
        "name=\"j999\" type=\"Revolute\"",
    );
    let message = error(&text).to_string();
    assert!(
        message.starts_with("line 2000: malformed URDF in joint 'j999'"),
        "{message}"
    );
}

/// XML nested 100 000 deep (not a chain: `<robot><a><a>...`) is refused at the line of the
/// first element too deep, not parsed into a stack overflow; so is an unclosed one. A URDF
/// nested as deep as the limit still gets the parser's own error.
#[test]
fn xml_nested_beyond_the_depth_limit_is_refused_with_its_line() {
    let depth = 100_000;
    let deep = format!(
        "<robot name=\"deep\">\n{}{}</robot>",
        "<a>".repeat(depth),
        "</a>".repeat(depth)
    );
    let e = error(&deep);
    says(&e, &["nested more than 100 deep", "line 2"]);
    let unclosed = format!("<robot name=\"deep\">{}", "<a>".repeat(depth));
    says(&error(&unclosed), &["nested more than 100 deep"]);
    let at_limit = robot(&format!("{}{}", "<a>".repeat(99), "</a>".repeat(99)));
    let message = error(&at_limit).to_string();
    assert!(!message.contains("nested"), "{message}");
}
