//! Resolved acceleration: a pose interpolation tracked.

use super::*;

/// Tracks a pose interpolation (1.5 s, 7.5 cm and 0.27 rad): tip position error along the path,
/// from forward kinematics of the logged joint positions.
#[test]
fn resolved_acceleration_tracks_a_pose_interpolation() {
    for file in ["panda.urdf", "puma560.urdf"] {
        let robot = robot(file);
        let (q0, _) = poses(&robot);
        let mut kin = KinematicsWorkspace::new(&robot);
        let start = armctl_model::forward_kinematics(&robot, &mut kin, &q0)
            .unwrap()
            .tip();
        let goal = nalgebra::IsometryMatrix3::from_parts(
            (start.translation.vector + Vector3::new(0.06, -0.05, 0.04)).into(),
            nalgebra::Rotation3::from_euler_angles(0.15, -0.1, 0.2) * start.rotation,
        );
        let path = armctl_control::reference::PoseInterpolation::new(start, goal, 1.5).unwrap();
        let mut controller = armctl_control::ResolvedAcceleration::new(&robot).unwrap();
        let mut sim = Simulator::new(&robot, &q0, SimConfig::default()).unwrap();
        let log = run_closed_loop(
            &mut sim,
            &mut controller,
            &SetPoint::new(q0.clone()),
            2500,
            |k, _, c| {
                if k == 0 {
                    c.task_space().unwrap().set_target_pose(goal, 1.5).unwrap();
                }
            },
        )
        .unwrap();
        let mut sum = 0.0;
        let mut count = 0.0;
        for k in (0..log.time.len()).step_by(10) {
            let q: Vec<f64> = log.q.iter().map(|c| c[k]).collect();
            let tip = armctl_model::forward_kinematics(&robot, &mut kin, &q)
                .unwrap()
                .tip();
            // The controller's clock starts with the first update, one step before t.
            let want = path.sample(log.time[k]);
            sum += (tip.translation.vector - want.pose.translation.vector).norm_squared();
            count += 1.0;
        }
        let rms = (sum / count).sqrt();
        let end = (controller.tip_pose().translation.vector - goal.translation.vector).norm();
        eprintln!("{file}: resolved acceleration, tip RMS error along the path {rms:.2e} m, final {end:.2e} m");
        assert!(rms < 1e-4 && end < 1e-6, "{file}: RMS {rms}, final {end}");
    }
}
