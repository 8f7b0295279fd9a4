//! Property test: random URDF chains (skew, parallel, anti-parallel, intersecting and
//! collinear neighbours, fixed joints, prismatic joints, non-unit axes, frames off the axes)
//! convert to MDH models whose forward kinematics equals plain URDF kinematics, and whose
//! tables follow the default choices where the geometry leaves them free (parallel: alpha 0,
//! anti-parallel: alpha pi, collinear and intersecting: a = 0, skew: a >= 0).
//!
//! The cases come from a fixed seed, so every run checks the same chains.

use armctl_model::test_support::random_chain::{RandomChain, Relation};
use armctl_model::{forward_kinematics, urdf_to_robot, ChainOptions, KinematicsWorkspace};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        rng_seed: RngSeed::Fixed(0x4d44_485f_4348_4e53),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mdh_fk_equals_urdf_fk(seed in any::<u64>(), dof in 1usize..8, fractions in prop::collection::vec(0.0f64..1.0, 7)) {
        let chain = RandomChain::generate(seed, dof);
        let conversion = urdf_to_robot(&chain.urdf, &ChainOptions::default())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", chain.urdf)))?;
        let robot = conversion.robot;
        prop_assert_eq!(robot.dof(), dof);
        let q: Vec<f64> = chain.limits.iter().zip(&fractions).map(|((lo, hi), f)| lo + (hi - lo) * f).collect();
        let mut ws = KinematicsWorkspace::new(&robot);
        let mdh = forward_kinematics(&robot, &mut ws, &q).unwrap().tip().to_homogeneous();
        let urdf = chain.tip_pose(&q).to_homogeneous();
        let err = (mdh - urdf).abs().max();
        prop_assert!(err < 1e-10, "error {:e} relations {:?}\n{}", err, chain.relations, chain.urdf);
        // The table follows the default choices where the geometry leaves them free.
        for (i, relation) in chain.relations.iter().enumerate().skip(1) {
            let m = &robot.joints()[i].mdh;
            match relation {
                Relation::Parallel => prop_assert!(m.alpha().abs() < 1e-9),
                Relation::AntiParallel => prop_assert!((m.alpha().abs() - std::f64::consts::PI).abs() < 1e-9),
                Relation::Collinear => prop_assert!(m.a().abs() < 1e-9 && m.alpha().sin().abs() < 1e-9),
                Relation::Intersecting => prop_assert!(m.a().abs() < 1e-9),
                Relation::Skew => prop_assert!(m.a() >= 0.0),
            }
        }
    }
}
