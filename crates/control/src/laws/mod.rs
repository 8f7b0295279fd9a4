//! The control laws, one per file, each with its law in the module documentation.

pub(crate) mod adaptive_computed_torque;
pub(crate) mod cartesian_impedance;
pub(crate) mod computed_torque;
pub(crate) mod cooperative;
pub(crate) mod hybrid_force_position;
pub(crate) mod independent_pd;
pub(crate) mod joint_impedance;
pub(crate) mod pd_fixed_gravity;
pub(crate) mod pd_gravity;
pub(crate) mod resolved_acceleration;
pub(crate) mod robust;
pub(crate) mod sliding_mode;
pub(crate) mod slotine_li;
pub(crate) mod slotine_li_adaptive;
pub(crate) mod slotine_li_adaptive_base;
pub(crate) mod slotine_sliding_mode;
