//! What the controller estimates from the motion, for a host to publish: the external joint
//! torques, their bounds and the tip wrench that explains them (`ControllerCore::external_torques`). All
//! allocate nothing: a real-time thread may read them after each update.

use crate::handle::{guarded, invalid, ArmctlController};
use crate::status::ArmctlStatus;
use crate::values::slice_mut;

/// The external joint torques estimated at the last update (N m or N, one per joint in the
/// order of `joints`; zero before two valid states) into `torques`: what the model and the
/// commands do not explain, filtered with the time constant `1 / external_torque_gain`.
#[no_mangle]
pub extern "C" fn armctl_external_torques(
    handle: *mut ArmctlController,
    torques: *mut f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        let n = h.joints.len();
        // SAFETY: `n` writable values by the caller's contract.
        let out = unsafe { slice_mut(torques, n, "torques") }.map_err(invalid)?;
        let runtime = h.runtime();
        let estimate = runtime.core().external_torques();
        for (slot, &i) in out.iter_mut().zip(runtime.command_order()) {
            *slot = estimate[i];
        }
        Ok(())
    })
}

/// Per joint, the bound of what the external torque estimate may carry without any contact
/// (N m or N, in the order of `joints`) into `bounds`: `model_error` of the applied torque, the
/// friction the model leaves out, the Coulomb friction whose sign is lost at rest, a command
/// delay and the velocity noise. An estimate beyond it is a contact (or a model worse than
/// `model_error`); within it, it may be either.
#[no_mangle]
pub extern "C" fn armctl_external_torque_bounds(
    handle: *mut ArmctlController,
    bounds: *mut f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        let n = h.joints.len();
        // SAFETY: `n` writable values by the caller's contract.
        let out = unsafe { slice_mut(bounds, n, "bounds") }.map_err(invalid)?;
        let runtime = h.runtime();
        let bound = runtime.core().external_torque_bounds();
        for (slot, &i) in out.iter_mut().zip(runtime.command_order()) {
            *slot = bound[i];
        }
        Ok(())
    })
}

/// The tip wrench that explains the external torques, `[fx, fy, fz, mx, my, mz]` (N, N m) in
/// the tip link's axes with the moment about its origin, into `wrench` (6 values); zero
/// before a valid state. Damped near singularities, and blind to what no tip wrench gives (a
/// contact on a link).
#[no_mangle]
pub extern "C" fn armctl_external_wrench(
    handle: *mut ArmctlController,
    wrench: *mut f64,
) -> ArmctlStatus {
    guarded(handle, |h| {
        // SAFETY: 6 writable values by the caller's contract.
        let out = unsafe { slice_mut(wrench, 6, "wrench") }.map_err(invalid)?;
        let estimate = h.runtime_mut().external_wrench_in_tip_axes();
        out.copy_from_slice(&estimate.unwrap_or([0.0; 6]));
        Ok(())
    })
}
