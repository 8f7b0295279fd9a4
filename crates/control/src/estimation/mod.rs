//! Estimators beside the laws: external torque, tip wrench and the collision thresholds that bound them.

pub mod collision_thresholds;
pub mod momentum_observer;
pub mod tip_wrench_estimate;
