//! Numerical building blocks: symmetric eigen solvers, the task-space inertia, configuration samples.

pub(crate) mod configuration_samples;
pub(crate) mod jacobi_eigen;
pub(crate) mod task_inertia;
pub(crate) mod warm_eigen;
