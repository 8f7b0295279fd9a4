//! The URDF -> MDH conversion against third-party numbers (Pinocchio, Robotics Toolbox):
//! tip poses, MDH frame poses, joint axes, and the MDH table of URDFs written from one.

use armctl_model::test_support::reference::{matrix4, Reference, Sample, REFERENCE_URDFS};
use armctl_model::{
    forward_kinematics, urdf_file_to_robot, ChainOptions, JointKind, KinematicsWorkspace, Robot,
};
use nalgebra::{IsometryMatrix3, Matrix3, Matrix4, Vector3};

const TOL: f64 = 1e-10;

fn load(urdf: &str, tip: &str) -> Robot {
    let options = ChainOptions {
        tip_link: Some(tip.to_string()),
        ..ChainOptions::default()
    };
    let conversion = urdf_file_to_robot(&Reference::urdf_path(urdf), &options)
        .unwrap_or_else(|e| panic!("{urdf}: {e}"));
    assert!(
        conversion.report.fk_residual < TOL,
        "{urdf}: self-check residual {}",
        conversion.report.fk_residual
    );
    conversion.robot
}

fn max_abs(m: Matrix4<f64>) -> f64 {
    m.abs().max()
}

#[test]
fn tip_pose_matches_reference_for_every_sample() {
    for (urdf, stem, tip) in REFERENCE_URDFS {
        let robot = load(urdf, tip);
        let reference = Reference::load(stem);
        let mut ws = KinematicsWorkspace::new(&robot);
        for (k, s) in reference.samples.iter().enumerate() {
            let want = matrix4(s.T_tip.as_ref().or(s.T_tool.as_ref()).expect("tip pose"));
            let got = forward_kinematics(&robot, &mut ws, &s.q).unwrap().tip();
            let err = max_abs(got.to_homogeneous() - want);
            assert!(err < TOL, "{urdf} sample {k}: tip pose error {err:e}");
        }
    }
}

#[test]
fn joint_axes_match_reference() {
    for (urdf, stem, tip) in REFERENCE_URDFS.iter().filter(|r| !r.1.ends_with("_mdh")) {
        let robot = load(urdf, tip);
        let reference = Reference::load(stem);
        assert_eq!(
            robot.joint_names().collect::<Vec<_>>(),
            reference.joint_names.clone().unwrap()
        );
        let mut ws = KinematicsWorkspace::new(&robot);
        for s in &reference.samples {
            let poses = forward_kinematics(&robot, &mut ws, &s.q).unwrap();
            for (i, axis) in s.axes_world.as_ref().unwrap().iter().enumerate() {
                let frame = poses.mdh_frames()[i + 1];
                let (p, u) = (
                    Vector3::new(axis[0], axis[1], axis[2]),
                    Vector3::new(axis[3], axis[4], axis[5]),
                );
                let z = frame.rotation * Vector3::z();
                let off_line = (frame.translation.vector - p).cross(&u).norm();
                assert!((z - u).norm() < TOL, "{urdf} joint {i}: axis {z} vs {u}");
                assert!(
                    off_line < TOL,
                    "{urdf} joint {i}: origin {off_line:e} off the axis"
                );
            }
        }
    }
}

fn reference_frames(s: &Sample) -> Vec<Matrix4<f64>> {
    s.T_links
        .as_ref()
        .unwrap()
        .iter()
        .map(|t| matrix4(t))
        .collect()
}

#[test]
fn urdf_written_from_mdh_table_converts_back_to_it() {
    for (urdf, stem) in [
        ("puma560_mdh.urdf", "puma560_mdh"),
        ("stanford_mdh.urdf", "stanford_mdh"),
    ] {
        let robot = load(urdf, "tool0");
        let reference = Reference::load(stem);
        assert_eq!(robot.base(), &IsometryMatrix3::identity(), "{urdf} base");
        for (i, (joint, row)) in robot
            .joints()
            .iter()
            .zip(reference.links.as_ref().unwrap())
            .enumerate()
        {
            let m = &joint.mdh;
            let (theta, d) = match joint.kind {
                JointKind::Revolute => (row.theta + row.offset, row.d),
                JointKind::Prismatic => (row.theta, row.d + row.offset),
            };
            assert_eq!(joint.kind.as_str(), row.joint_type, "{urdf} joint {i} type");
            for (name, got, want) in [
                ("a", m.a(), row.a_prev),
                ("alpha", m.alpha(), row.alpha_prev),
                ("d", m.d(), d),
                ("theta", m.theta(), theta),
            ] {
                assert!(
                    (got - want).abs() < TOL,
                    "{urdf} joint {i} {name}: {got} vs {want}"
                );
            }
            let link = &robot.links()[i];
            assert!((link.mass - row.mass).abs() < TOL, "{urdf} link {i} mass");
            assert!(
                (link.com - Vector3::from(row.com)).norm() < TOL,
                "{urdf} link {i} com"
            );
            let inertia = Matrix3::from_fn(|r, c| row.inertia_com[r][c]);
            assert!(
                (link.inertia_com - inertia).norm() < TOL,
                "{urdf} link {i} inertia"
            );
        }
        let mut ws = KinematicsWorkspace::new(&robot);
        for s in &reference.samples {
            let poses = forward_kinematics(&robot, &mut ws, &s.q).unwrap();
            for (i, want) in reference_frames(s).iter().enumerate() {
                let err = max_abs(poses.mdh_frames()[i + 1].to_homogeneous() - want);
                assert!(err < TOL, "{urdf} frame {}: {err:e}", i + 1);
            }
        }
    }
}

/// The generic URDFs (frames moved along and turned about the axes) give frames that differ
/// from the reference only in the free choices: same z axes, origins on the same axis lines,
/// and where neighbouring axes are not parallel, the same origins and x up to sign. The
/// inertials, mapped to the world, are the same.
#[test]
fn generic_urdf_gives_same_frames_up_to_free_choices() {
    for (urdf, stem) in [
        ("puma560_mdh_generic.urdf", "puma560_mdh"),
        ("stanford_mdh_generic.urdf", "stanford_mdh"),
    ] {
        let robot = load(urdf, "tool0");
        let reference = Reference::load(stem);
        let table = reference.links.as_ref().unwrap();
        let mut ws = KinematicsWorkspace::new(&robot);
        for s in &reference.samples {
            let poses = forward_kinematics(&robot, &mut ws, &s.q).unwrap();
            let theirs = reference_frames(s);
            for (i, want) in theirs.iter().enumerate() {
                let ours = poses.mdh_frames()[i + 1].to_homogeneous();
                let axis =
                    |m: &Matrix4<f64>, c: usize| Vector3::new(m[(0, c)], m[(1, c)], m[(2, c)]);
                // Inertials seen from the world agree.
                let link = &robot.links()[i];
                let row = &table[i];
                let (ro, rt) = (ours.fixed_view::<3, 3>(0, 0), want.fixed_view::<3, 3>(0, 0));
                let com_ours = ro * link.com + axis(&ours, 3);
                let com_theirs = rt * Vector3::from(row.com) + axis(want, 3);
                assert!(
                    (com_ours - com_theirs).norm() < TOL,
                    "{urdf} link {} com",
                    i + 1
                );
                let inertia = Matrix3::from_fn(|r, c| row.inertia_com[r][c]);
                let err =
                    (ro * link.inertia_com * ro.transpose() - rt * inertia * rt.transpose()).norm();
                assert!(err < TOL, "{urdf} link {} inertia", i + 1);
                assert!((link.mass - row.mass).abs() < TOL);
                let (oz, tz) = (axis(&ours, 2), axis(want, 2));
                let offset = axis(&ours, 3) - axis(want, 3);
                assert!((oz - tz).norm() < TOL, "{urdf} frame {}: z", i + 1);
                // A prismatic axis has a direction but no line: its line is a free choice, and
                // so are the common normals that reach it.
                let prismatic =
                    |j: usize| table.get(j).is_some_and(|l| l.joint_type == "prismatic");
                if prismatic(i) {
                    continue;
                }
                assert!(
                    offset.cross(&tz).norm() < TOL,
                    "{urdf} frame {}: origin off the axis",
                    i + 1
                );
                let next_parallel = theirs
                    .get(i + 1)
                    .is_none_or(|n| axis(n, 2).cross(&tz).norm() < 1e-9);
                if !next_parallel && !prismatic(i + 1) {
                    assert!(offset.norm() < TOL, "{urdf} frame {}: origin", i + 1);
                    assert!(
                        axis(&ours, 0).cross(&axis(want, 0)).norm() < TOL,
                        "{urdf} frame {}: x",
                        i + 1
                    );
                }
            }
        }
    }
}

/// Every URDF link of the Panda's chain, placed on the model through its link frame, is where
/// the chain cut at that link puts its tip: at any configuration, not only the zero one.
#[test]
fn each_link_frame_follows_its_link_as_a_chain_cut_there_does() {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let full = urdf_file_to_robot(std::path::Path::new(urdf), &ChainOptions::default()).unwrap();
    let q = [0.3, -0.7, 0.4, -2.1, 0.5, 1.9, -0.6];
    let mut ws = KinematicsWorkspace::new(&full.robot);
    let frames: Vec<IsometryMatrix3<f64>> = forward_kinematics(&full.robot, &mut ws, &q)
        .unwrap()
        .mdh_frames()
        .to_vec();
    let mut checked = 0;
    for link in [
        "panda_link2",
        "panda_link4",
        "panda_link6",
        "panda_link7",
        "panda_link8",
    ] {
        let frame = full.report.link_frame(link).expect(link);
        let options = ChainOptions {
            tip_link: Some(link.to_string()),
            ..ChainOptions::default()
        };
        let cut = urdf_file_to_robot(std::path::Path::new(urdf), &options).unwrap();
        let n = cut.robot.dof();
        assert_eq!(frame.frame, n, "{link} moves with joint {n}");
        let mut cut_ws = KinematicsWorkspace::new(&cut.robot);
        let want = forward_kinematics(&cut.robot, &mut cut_ws, &q[..n])
            .unwrap()
            .tip();
        let got = frames[frame.frame] * frame.pose;
        let err = max_abs(got.to_homogeneous() - want.to_homogeneous());
        assert!(err < TOL, "{link}: {err}");
        checked += 1;
    }
    assert_eq!(checked, 5);
    let base = full.report.link_frame("panda_link0").unwrap();
    assert_eq!(base.frame, 0, "the base link is fixed to frame {{0}}");
}
