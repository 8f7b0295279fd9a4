//! The log-Cholesky parametrisation of a link's inertial parameters (Rucker and Wensing 2022):
//! ten unconstrained numbers that always describe a physically consistent body.
//!
//! A link's ten parameters `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]` are realisable by a
//! rigid body exactly when its pseudo-inertia `J = [[S, h], [h^T, m]]` is positive
//! semidefinite (Wensing, Kim and Slotine 2017), with `S = integral(r r^T dm) = tr(I)/2 - I`
//! (I the inertia tensor about the frame origin) and `h` the first moment. Writing
//! `J = U U^T` with `U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3],
//! [0, 0, 0, 1]]` covers every positive definite `J` once, so a fit over
//! `theta = [alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3]` can only return consistent bodies.

use armctl_model::PARAMS_PER_LINK;
use nalgebra::{Matrix3, Matrix4, SMatrix, SymmetricEigen, Vector3};

/// The log-Cholesky coordinates of one link.
pub(crate) type Theta = [f64; PARAMS_PER_LINK];

/// `d pi / d theta`, 10 x 10.
pub(crate) type ParameterJacobian = SMatrix<f64, PARAMS_PER_LINK, PARAMS_PER_LINK>;

/// The pseudo-inertia of a link's parameters.
pub(crate) fn pseudo_inertia(p: &[f64; PARAMS_PER_LINK]) -> Matrix4<f64> {
    let inertia = Matrix3::new(p[0], p[1], p[2], p[1], p[3], p[4], p[2], p[4], p[5]);
    let second_moment = Matrix3::identity() * (0.5 * inertia.trace()) - inertia;
    let mut j = Matrix4::zeros();
    j.fixed_view_mut::<3, 3>(0, 0).copy_from(&second_moment);
    let h = Vector3::new(p[6], p[7], p[8]);
    j.fixed_view_mut::<3, 1>(0, 3).copy_from(&h);
    j.fixed_view_mut::<1, 3>(3, 0).copy_from(&h.transpose());
    j[(3, 3)] = p[9];
    j
}

/// The parameters of a pseudo-inertia (the inverse of [`pseudo_inertia`]).
pub(crate) fn parameters_of(j: &Matrix4<f64>) -> [f64; PARAMS_PER_LINK] {
    let s = j.fixed_view::<3, 3>(0, 0);
    let trace = s.trace();
    [
        trace - s[(0, 0)],
        -s[(0, 1)],
        -s[(0, 2)],
        trace - s[(1, 1)],
        -s[(1, 2)],
        trace - s[(2, 2)],
        j[(0, 3)],
        j[(1, 3)],
        j[(2, 3)],
        j[(3, 3)],
    ]
}

/// How far inside the set of bodies a link's parameters are: the smallest eigenvalue of its
/// pseudo-inertia scaled to unit size (second moment of trace 1, mass 1), so that a link's
/// size and mass do not count. Negative for parameters no body has, zero on the boundary (a
/// point mass, a rod, a plate), about 1/3 for a ball about its frame origin.
pub(crate) fn consistency_margin(p: &[f64; PARAMS_PER_LINK]) -> f64 {
    let j = pseudo_inertia(p);
    let (second, mass) = (j.fixed_view::<3, 3>(0, 0).trace(), j[(3, 3)]);
    if !(second > 0.0 && mass > 0.0) {
        // No mass or no extent: no body, or a point at best.
        return SymmetricEigen::new(j).eigenvalues.min().min(0.0);
    }
    let (s, m) = (1.0 / second.sqrt(), 1.0 / mass.sqrt());
    let scale = Matrix4::from_diagonal(&nalgebra::Vector4::new(s, s, s, m));
    SymmetricEigen::new(scale * j * scale).eigenvalues.min()
}

/// `U` of `theta`.
fn upper_factor(theta: &Theta) -> Matrix4<f64> {
    let [alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3] = *theta;
    #[rustfmt::skip]
    let u = Matrix4::new(
        d1.exp(), s12, s13, t1,
        0.0, d2.exp(), s23, t2,
        0.0, 0.0, d3.exp(), t3,
        0.0, 0.0, 0.0, 1.0,
    );
    u * alpha.exp()
}

/// The parameters `theta` stands for: always a physically consistent body.
pub(crate) fn parameters(theta: &Theta) -> [f64; PARAMS_PER_LINK] {
    let u = upper_factor(theta);
    parameters_of(&(u * u.transpose()))
}

/// The entry of `U` each of `s12, s23, s13, t1, t2, t3` sets.
const OFF_DIAGONAL: [(usize, usize); 6] = [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)];

/// `d pi / d theta` at `theta`: column k is the change of the parameters per unit of
/// `theta[k]`, from `dJ = dU U^T + U dU^T`.
pub(crate) fn parameter_jacobian(theta: &Theta) -> ParameterJacobian {
    let u = upper_factor(theta);
    let scale = theta[0].exp();
    let mut jacobian = ParameterJacobian::zeros();
    for k in 0..PARAMS_PER_LINK {
        let mut du = Matrix4::zeros();
        match k {
            0 => du = u,
            1..=3 => du[(k - 1, k - 1)] = u[(k - 1, k - 1)],
            _ => du[OFF_DIAGONAL[k - 4]] = scale,
        }
        let dj = du * u.transpose() + u * du.transpose();
        jacobian.set_column(k, &parameters_of(&dj).into());
    }
    jacobian
}

/// The coordinates of a body whose pseudo-inertia is positive definite, `None` otherwise.
pub(crate) fn theta_of(p: &[f64; PARAMS_PER_LINK]) -> Option<Theta> {
    // J = U U^T with U upper triangular: the Cholesky factor of J with its rows and columns
    // in reverse order, reversed back.
    let reversed = reverse(&pseudo_inertia(p));
    let lower = reversed.cholesky()?.l();
    let u = reverse(&lower);
    let scale = u[(3, 3)];
    let unit = u / scale;
    let mut theta = [0.0; PARAMS_PER_LINK];
    theta[0] = scale.ln();
    for i in 0..3 {
        theta[1 + i] = unit[(i, i)].ln();
    }
    for (k, &entry) in OFF_DIAGONAL.iter().enumerate() {
        theta[4 + k] = unit[entry];
    }
    Some(theta)
}

fn reverse(m: &Matrix4<f64>) -> Matrix4<f64> {
    Matrix4::from_fn(|r, c| m[(3 - r, 3 - c)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_model::{LinkParameters, RigidInertia};
    use proptest::prelude::*;

    fn body() -> [f64; PARAMS_PER_LINK] {
        LinkParameters::from_inertia(&RigidInertia {
            mass: 2.5,
            com: Vector3::new(0.05, -0.1, 0.2),
            inertia_com: Matrix3::new(0.03, 0.002, -0.001, 0.002, 0.04, 0.003, -0.001, 0.003, 0.02),
        })
        .to_vector()
    }

    #[test]
    fn a_body_round_trips_through_its_coordinates() {
        let p = body();
        let back = parameters(&theta_of(&p).unwrap());
        for (a, b) in p.iter().zip(&back) {
            assert!((a - b).abs() < 1e-12, "{p:?} vs {back:?}");
        }
        assert!(consistency_margin(&p) > 0.0);
    }

    #[test]
    fn parameters_no_body_has_have_no_coordinates_and_a_negative_margin() {
        let mut negative_mass = body();
        negative_mass[9] = -1.0;
        assert!(theta_of(&negative_mass).is_none());
        assert!(consistency_margin(&negative_mass) < 0.0);
        // The triangle inequality broken: XX > YY + ZZ about the centre of mass.
        let broken = LinkParameters::from_inertia(&RigidInertia {
            mass: 1.0,
            com: Vector3::zeros(),
            inertia_com: Matrix3::from_diagonal(&Vector3::new(0.1, 0.02, 0.03)),
        })
        .to_vector();
        assert!(consistency_margin(&broken) < 0.0);
    }

    #[test]
    fn the_jacobian_is_the_derivative() {
        let theta = theta_of(&body()).unwrap();
        let jacobian = parameter_jacobian(&theta);
        for k in 0..PARAMS_PER_LINK {
            let h = 1e-6;
            let (mut plus, mut minus) = (theta, theta);
            plus[k] += h;
            minus[k] -= h;
            let (a, b) = (parameters(&plus), parameters(&minus));
            for i in 0..PARAMS_PER_LINK {
                let numeric = (a[i] - b[i]) / (2.0 * h);
                assert!(
                    (numeric - jacobian[(i, k)]).abs() < 1e-7,
                    "d p{i} / d theta{k}: {numeric} vs {}",
                    jacobian[(i, k)]
                );
            }
        }
    }

    proptest! {
        #[test]
        fn every_coordinate_is_a_consistent_body(theta in proptest::array::uniform10(-3.0..3.0f64)) {
            let p = parameters(&theta);
            prop_assert!(p[9] > 0.0);
            prop_assert!(consistency_margin(&p) > -1e-9);
        }
    }
}
