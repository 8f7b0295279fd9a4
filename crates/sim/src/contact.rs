//! The environment: planes and boxes that points on the arm's links touch.
//!
//! A point at depth `d > 0` inside an obstacle, moving into it at `d_dot`, feels the
//! Hunt-Crossley normal force `f_n = k d (1 + alpha d_dot)`, never negative (no adhesion), along
//! the obstacle's outward normal, and regularised Coulomb friction
//! `f_t = -mu f_n v_t / sqrt(|v_t|^2 + eps^2)` against its sliding velocity `v_t`. The force is
//! zero at first touch (d = 0), so contact adds no energy, and with `alpha = 0` the bounce is
//! elastic. The forces enter the dynamics as `J_p^T f` at each point.
//!
//! Integration: the spring `k d` is explicit, which keeps the energy of an elastic bounce under
//! RK4; the simulator refuses at start a stiffness its step cannot resolve (`sqrt(k / m) dt`
//! above 1 for a point's lightest effective mass m). The dissipative parts (Hunt-Crossley damping and friction, whose
//! slope `mu f_n / eps` is huge at rest) act at the end-of-step velocity, linearised, like the
//! joint friction: `J_p^T dt D J_p` joins the mass matrix of the step's solve.

use armctl_model::FrameId;
use nalgebra::{IsometryMatrix3, Matrix3, Point3, Unit, Vector3};

/// An obstacle's shape, in the base link frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// The half-space below the plane through `point` with outward `normal`.
    Plane {
        /// A point of the surface, m.
        point: Vector3<f64>,
        /// Outward normal.
        normal: Unit<Vector3<f64>>,
    },
    /// A box centred at `pose` with half side lengths `half_extents` along its axes.
    Box {
        /// Centre and axes.
        pose: IsometryMatrix3<f64>,
        /// Half side lengths, m.
        half_extents: Vector3<f64>,
    },
}

impl Shape {
    /// Depth of `p` inside the shape and the outward normal at the nearest surface, if inside.
    pub fn penetration(&self, p: &Vector3<f64>) -> Option<(f64, Vector3<f64>)> {
        match self {
            Shape::Plane { point, normal } => {
                let depth = -normal.dot(&(p - point));
                (depth > 0.0).then(|| (depth, normal.into_inner()))
            }
            Shape::Box { pose, half_extents } => {
                let local = pose.inverse_transform_point(&Point3::from(*p)).coords;
                let slack = half_extents - local.abs();
                if slack.min() <= 0.0 {
                    return None;
                }
                let axis = slack.imin();
                let mut normal = Vector3::zeros();
                normal[axis] = if local[axis] >= 0.0 { 1.0 } else { -1.0 };
                Some((slack[axis], pose.rotation * normal))
            }
        }
    }
}

/// Something the arm can touch.
#[derive(Debug, Clone, PartialEq)]
pub struct Obstacle {
    /// Its name, in reports.
    pub name: String,
    /// Where it is.
    pub shape: Shape,
    /// Normal stiffness k, N/m.
    pub stiffness: f64,
    /// Hunt-Crossley damping alpha, s/m (0: elastic; about `1.5 (1 - e) / v` for a coefficient
    /// of restitution e at impact speed v).
    pub damping: f64,
    /// Coulomb friction coefficient mu.
    pub friction: f64,
}

/// A point on the arm that touches obstacles.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactPoint {
    /// Its name, in reports and `run.csv` (e.g. `panda_hand/tcp`).
    pub name: String,
    /// The frame it is fixed in.
    pub frame: FrameId,
    /// Its position in that frame, m.
    pub position: Vector3<f64>,
}

/// A 6-axis force/torque sensor: it reports the environment's wrench on the links beyond it
/// (contact forces only, as a sensor whose load and inertia were compensated), about its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct ForceSensor {
    /// Its name (the link it is mounted on), for messages' frame_id.
    pub name: String,
    /// The frame it is fixed in; points on this frame and beyond load it.
    pub frame: FrameId,
    /// Its pose in that frame.
    pub pose: IsometryMatrix3<f64>,
    /// Standard deviation of Gaussian noise on each force component, N (torque: N m).
    pub noise: f64,
    /// A constant offset `[f; m]` added to the reading.
    pub bias: [f64; 6],
}

/// The environment of the simulated arm. Empty by default.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// What can be touched.
    pub obstacles: Vec<Obstacle>,
    /// The arm's points that touch it.
    pub points: Vec<ContactPoint>,
    /// Sliding speed over which friction reaches its Coulomb value (regularisation), m/s.
    pub slip_velocity: f64,
    /// A force/torque sensor, if any.
    pub sensor: Option<ForceSensor>,
}

/// The default regularisation of friction, m/s.
pub const DEFAULT_SLIP_VELOCITY: f64 = 1e-3;

impl Default for Scene {
    fn default() -> Self {
        Self {
            obstacles: Vec::new(),
            points: Vec::new(),
            slip_velocity: DEFAULT_SLIP_VELOCITY,
            sensor: None,
        }
    }
}

/// The sensor's reading: the wrench about its origin, base link axes, and its pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensedWrench {
    /// Force, N.
    pub force: Vector3<f64>,
    /// Moment about the sensor's origin, N m.
    pub torque: Vector3<f64>,
    /// The sensor's pose in the base link frame.
    pub pose: IsometryMatrix3<f64>,
}

impl SensedWrench {
    /// `[f; m]` with the moment taken about `point` (base link frame), base link axes: what a
    /// controller's measured tip wrench is, with `point` the tip.
    pub fn about(&self, point: &Vector3<f64>) -> [f64; 6] {
        let m = self.torque + (self.pose.translation.vector - point).cross(&self.force);
        [self.force.x, self.force.y, self.force.z, m.x, m.y, m.z]
    }

    /// `[f; m]` in the sensor's own axes, about its origin: what a WrenchStamped with the
    /// sensor's frame_id carries.
    pub fn in_sensor_axes(&self) -> [f64; 6] {
        let f = self.pose.rotation.inverse() * self.force;
        let m = self.pose.rotation.inverse() * self.torque;
        [f.x, f.y, f.z, m.x, m.y, m.z]
    }
}

/// The index of the body a frame is fixed to, for ordering along the chain (the tip is on
/// body n).
pub(crate) fn body_of(frame: FrameId, dof: usize) -> usize {
    match frame {
        FrameId::Mdh(i) => i,
        FrameId::Tip => dof,
    }
}

/// The force at a point in contact and its slopes, base link axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactForce {
    /// Force on the arm, N.
    pub force: Vector3<f64>,
    /// Depth, m.
    pub depth: f64,
    /// Damping slope `-df/dv` (normal damping and friction secant), N s/m.
    pub damping: Matrix3<f64>,
}

impl Obstacle {
    /// The force this obstacle puts on a point at `p` moving at `v`, if it touches.
    pub fn force(&self, p: &Vector3<f64>, v: &Vector3<f64>, slip: f64) -> Option<ContactForce> {
        let (depth, n) = self.shape.penetration(p)?;
        let depth_rate = -n.dot(v);
        let normal = self.stiffness * depth * (1.0 + self.damping * depth_rate);
        if normal <= 0.0 {
            return None;
        }
        let sliding = v - n * n.dot(v);
        let scale = self.friction * normal / (sliding.norm_squared() + slip * slip).sqrt();
        let across = Matrix3::identity() - n * n.transpose();
        Some(ContactForce {
            force: n * normal - sliding * scale,
            depth,
            damping: n * n.transpose() * (self.stiffness * self.damping * depth) + across * scale,
        })
    }
}

impl Scene {
    /// Whether anything can touch anything.
    pub fn is_active(&self) -> bool {
        !self.obstacles.is_empty() && !self.points.is_empty()
    }

    /// The first bad value, named.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !(self.slip_velocity.is_finite() && self.slip_velocity > 0.0) {
            return Err(("slip_velocity".into(), "must be positive".into()));
        }
        for o in &self.obstacles {
            let shape_ok = match &o.shape {
                Shape::Plane { point, normal } => {
                    finite(point.as_slice()) && finite(normal.as_slice())
                }
                Shape::Box { pose, half_extents } => {
                    finite(pose.translation.vector.as_slice())
                        && finite(pose.rotation.matrix().as_slice())
                        && half_extents.iter().all(|h| h.is_finite() && *h > 0.0)
                }
            };
            let values_ok = o.stiffness.is_finite()
                && o.stiffness > 0.0
                && o.damping.is_finite()
                && o.damping >= 0.0
                && o.friction.is_finite()
                && o.friction >= 0.0;
            if !shape_ok || !values_ok {
                return Err((
                    format!("obstacle '{}'", o.name),
                    "needs a finite shape (positive half extents), positive stiffness, and damping and friction not negative".into(),
                ));
            }
        }
        for p in &self.points {
            if !finite(p.position.as_slice()) {
                return Err((
                    format!("contact point '{}'", p.name),
                    "position must be finite".into(),
                ));
            }
        }
        if let Some(s) = &self.sensor {
            let ok = s.noise.is_finite() && s.noise >= 0.0 && finite(&s.bias);
            if !ok {
                return Err((
                    format!("sensor '{}'", s.name),
                    "noise must be finite and not negative, bias finite".into(),
                ));
            }
        }
        Ok(())
    }
}
