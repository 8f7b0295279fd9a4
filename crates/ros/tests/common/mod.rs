//! What the mutated-log property tests share: an allocator that refuses huge allocations, and
//! the joint states their logs hold.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};

use armctl_nodes::msgs::{Header, JointState, Time};

/// Largest single allocation allowed: the logs are a few kilobytes.
pub(crate) const MAX_ALLOCATION: usize = 256 << 20;

/// The system allocator, refusing any allocation over [`MAX_ALLOCATION`] (the process then
/// aborts with "memory allocation of N bytes failed" instead of exhausting the machine). Each
/// test file installs it: `#[global_allocator] static ALLOCATOR: Capped = Capped;`.
pub(crate) struct Capped;

// SAFETY: every call is forwarded to the system allocator unchanged, or refused with null,
// which GlobalAlloc allows.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Twenty stamped joint states of two joints, 1 ms apart from t = 3 s.
pub(crate) fn states() -> Vec<JointState> {
    (0..20)
        .map(|k| {
            let t = 3.0 + k as f64 * 1e-3;
            JointState {
                header: Header {
                    stamp: Time::from_seconds(t),
                    frame_id: String::new(),
                },
                name: vec!["j1".into(), "j2".into()],
                position: vec![t.sin(), -0.5 * t],
                velocity: vec![t.cos(), -0.5],
                effort: vec![2.0 * t, -1.0],
            }
        })
        .collect()
}
