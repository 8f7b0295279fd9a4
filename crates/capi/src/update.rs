//! The control step, the reset at activation, the safe command at deactivation.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use armctl_runtime::controller_core::{CoreEvent, StepReport};
use armctl_runtime::node_configuration::in_command_order;

use crate::handle::{guarded, invalid, ArmctlController};
use crate::status::{ArmctlFault, ArmctlStatus, ArmctlUpdateStatus};
use crate::values::{slice, slice_mut};

/// One control step at `time` (s; any monotonic clock), `period` (s) after the last, on the
/// measured `positions` and `velocities`: writes the efforts into `efforts` and what happened
/// into `*status` (may be null). Holding (no state yet, NaN, implausible, stale, a failed law)
/// is not an error: the efforts are then the `safe_mode` hold. Arrays: one value per joint.
#[no_mangle]
pub extern "C" fn armctl_update(
    handle: *mut ArmctlController,
    time: f64,
    period: f64,
    positions: *const f64,
    velocities: *const f64,
    efforts: *mut f64,
    status: *mut ArmctlUpdateStatus,
) -> ArmctlStatus {
    armctl_update_partial(
        handle,
        time,
        period,
        positions,
        velocities,
        std::ptr::null(),
        efforts,
        status,
    )
}

/// As `armctl_update`, for a host that may fail to read some joints: `readable` (null: all)
/// has one byte per joint, 0 where that joint has no reading this cycle. One unreadable joint
/// makes the controller hold, naming it (as a joint missing from /joint_states does in
/// controller_node); none readable is no new state at all, which becomes a stale-state hold
/// after `state_timeout`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn armctl_update_partial(
    handle: *mut ArmctlController,
    time: f64,
    period: f64,
    positions: *const f64,
    velocities: *const f64,
    readable: *const u8,
    efforts: *mut f64,
    status: *mut ArmctlUpdateStatus,
) -> ArmctlStatus {
    guarded(handle, |h| {
        let n = h.joints.len();
        // SAFETY: `n` values each by the caller's contract; `readable` may be null.
        let (q, qd, out, readable) = unsafe {
            (
                slice(positions, n, "positions").map_err(invalid)?,
                slice(velocities, n, "velocities").map_err(invalid)?,
                slice_mut(efforts, n, "efforts").map_err(invalid)?,
                (!readable.is_null())
                    .then(|| slice(readable, n, "readable"))
                    .transpose()
                    .map_err(invalid)?,
            )
        };
        let unreadable = readable.and_then(|r| r.iter().position(|&ok| ok == 0));
        let none_readable = readable.is_some_and(|r| r.iter().all(|&ok| ok == 0));
        let chain_index = unreadable.map(|j| h.runtime().command_order()[j]);
        match chain_index {
            None => h.group.record_state(0, &h.joints, q, qd, time),
            Some(_) if none_readable => {}
            Some(joint) => h.runtime_mut().core_mut().on_unreadable_joint(joint, time),
        }
        h.group.step(time, period);
        // Before any valid state this is the step's own hold (zero), not the command of a run
        // before `armctl_reset`.
        let arm = &h.group.output().arms[0];
        in_command_order(h.group.command_order(), &arm.efforts, out);
        // SAFETY: null or writable by the caller's contract.
        if let Some(status) = unsafe { status.as_mut() } {
            *status = update_status(&arm.report);
        }
        if let Some(event) = h.group.output_mut().take_event(0) {
            h.last_event = Some(event);
        }
        Ok(())
    })
}

fn update_status(report: &StepReport) -> ArmctlUpdateStatus {
    let cancelled = matches!(
        report.event,
        Some(
            CoreEvent::Resumed {
                trajectory_cancelled: true
            } | CoreEvent::CollisionCleared {
                trajectory_cancelled: true,
                ..
            }
        )
    );
    ArmctlUpdateStatus {
        holding: report.fault.is_some(),
        fault: ArmctlFault::of(report.fault.as_ref()),
        changed: report.event.is_some(),
        trajectory_cancelled: cancelled,
        clipped: u32::try_from(report.safety.saturated).unwrap_or(u32::MAX),
    }
}

/// Writes into a byte buffer, cutting what does not fit (at a character boundary) and
/// counting what was asked for: formatting without allocating.
struct Cut<'a> {
    buffer: &'a mut [u8],
    written: usize,
    wanted: usize,
}

impl std::fmt::Write for Cut<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.wanted += text.len();
        let room = self.buffer.len().saturating_sub(self.written);
        let mut n = text.len().min(room);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        self.buffer[self.written..self.written + n].copy_from_slice(&text.as_bytes()[..n]);
        self.written += n;
        Ok(())
    }
}

/// What the last incident was, for the operator: e.g. "holding (gravity compensation):
/// implausible joint state: joint1 at 100 is beyond its limits ..." ("" before any), written
/// into `buffer[0..capacity]`, cut to fit and NUL-terminated. Returns the full length in
/// bytes (without the NUL). Allocates nothing: a real-time thread may call it when
/// `ArmctlUpdateStatus::changed` is set.
#[no_mangle]
pub extern "C" fn armctl_fault_text(
    handle: *const ArmctlController,
    buffer: *mut c_char,
    capacity: usize,
) -> usize {
    // SAFETY: null or a live handle by the caller's contract.
    let Some(h) = (unsafe { handle.as_ref() }) else {
        return 0;
    };
    if buffer.is_null() || capacity == 0 {
        return 0;
    }
    // SAFETY: `capacity` writable bytes at `buffer` by the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buffer.cast::<u8>(), capacity) };
    let mut cut = Cut {
        buffer: &mut bytes[..capacity - 1],
        written: 0,
        wanted: 0,
    };
    if let Some(event) = &h.last_event {
        let _ = std::fmt::Write::write_fmt(&mut cut, format_args!("{event}"));
    }
    let (written, wanted) = (cut.written, cut.wanted);
    bytes[written] = 0;
    wanted
}

/// Forgets states and the reference and starts over, as at creation: the next update with a
/// valid state holds the arm where it is (a host calls it on activation). A latched collision
/// stays latched until `reset_collision` is set.
#[no_mangle]
pub extern "C" fn armctl_reset(handle: *mut ArmctlController) -> ArmctlStatus {
    guarded(handle, |h| {
        h.group.restart();
        h.last_event = None;
        Ok(())
    })
}

/// The `safe_mode` command (gravity compensation at the last valid configuration, or zero),
/// within the effort limits, into `efforts`: what a host writes last on deactivation. After a
/// panic it is still tried once more (the model is rarely what failed), and zero efforts if
/// that panics too; the status is then `Panicked`.
#[no_mangle]
pub extern "C" fn armctl_safe_command(
    handle: *mut ArmctlController,
    efforts: *mut f64,
) -> ArmctlStatus {
    // SAFETY: null or a live handle by the caller's contract.
    let Some(h) = (unsafe { handle.as_mut() }) else {
        return ArmctlStatus::InvalidArgument;
    };
    let n = h.joints.len();
    // SAFETY: `n` writable values by the caller's contract.
    let out = match unsafe { slice_mut(efforts, n, "efforts") } {
        Ok(out) => out,
        Err(reason) => return h.fail(ArmctlStatus::InvalidArgument, &reason),
    };
    out.fill(0.0);
    let panicked = h.panicked;
    let hold = catch_unwind(AssertUnwindSafe(|| {
        h.group.safe_command(0);
        out.copy_from_slice(&h.group.output().arms[0].command);
    }));
    if hold.is_err() {
        out.fill(0.0);
        h.panicked = true;
    }
    match panicked || hold.is_err() {
        true => ArmctlStatus::Panicked,
        false => ArmctlStatus::Ok,
    }
}
