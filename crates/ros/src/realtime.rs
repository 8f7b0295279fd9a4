//! The control thread made real-time, as ros2_control's controller manager does it for its
//! update loop: memory locked (no page faults in the loop), the thread pinned to one CPU,
//! SCHED_FIFO at a priority. Applied to the thread that runs the node, after the middleware
//! has started its own threads (which keep the normal policy). Where the system does not allow
//! one of them, the node refuses to start and says which and how to allow it.

use armctl_control::ParameterValue;
use armctl_runtime::node_parameters::ParameterStore;
use armctl_runtime::RuntimeError;

/// What `realtime_priority` and `cpu_affinity` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RealtimeSettings {
    /// SCHED_FIFO priority, 1..=99; 0: the normal policy (and nothing else is done).
    pub priority: i32,
    /// The CPU to pin the control thread to, if any.
    pub cpu: Option<usize>,
}

fn refused(name: &str, reason: String) -> RuntimeError {
    RuntimeError::Parameter {
        name: name.into(),
        reason,
    }
}

impl RealtimeSettings {
    /// From a node's parameters (a node that does not declare them: off).
    pub fn from_parameters(parameters: &ParameterStore) -> Self {
        let integer = |name: &str| match parameters.get(name) {
            Some(ParameterValue::Integer(i)) => Some(*i),
            _ => None,
        };
        Self {
            priority: integer("realtime_priority").map_or(0, |p| p.clamp(0, 99) as i32),
            cpu: integer("cpu_affinity").and_then(|c| usize::try_from(c).ok()),
        }
    }

    /// Applies the settings to the calling thread: what was done, in words, or why the system
    /// refused (nothing is undone: the node then stops).
    pub fn apply_to_this_thread(&self) -> Result<Option<String>, RuntimeError> {
        if self.priority == 0 && self.cpu.is_none() {
            return Ok(None);
        }
        let mut done = Vec::new();
        if self.priority > 0 {
            lock_memory()?;
            done.push("memory locked".to_string());
        }
        if let Some(cpu) = self.cpu {
            pin_to(cpu)?;
            done.push(format!("pinned to CPU {cpu}"));
        }
        if self.priority > 0 {
            set_fifo(self.priority)?;
            done.insert(0, format!("SCHED_FIFO priority {}", self.priority));
        }
        Ok(Some(format!("control thread: {}", done.join(", "))))
    }
}

/// Whether the process may lock memory beyond its memlock limit (CAP_IPC_LOCK, in
/// `/proc/self/status`'s effective capabilities).
fn may_lock_without_limit() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// The memlock limit in bytes, if there is one.
fn memlock_limit() -> Option<u64> {
    // SAFETY: getrlimit writes the struct it is given.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    let read = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } == 0;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

fn lock_memory() -> Result<(), RuntimeError> {
    // With a finite limit, memory locked now and in future would make an allocation past the
    // limit fail, and the process abort mid-run: refused up front instead.
    if let Some(limit) = memlock_limit().filter(|_| !may_lock_without_limit()) {
        return Err(refused(
            "realtime_priority",
            format!("the memlock limit ({} kB) would make the controller's allocations fail once its memory is locked: make it unlimited (/etc/security/limits.conf: '@realtime - memlock unlimited', as ros2_control's real-time setup does), or set realtime_priority to 0", limit / 1024),
        ));
    }
    // SAFETY: mlockall takes flags only and changes no Rust-visible state.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(refused(
        "realtime_priority",
        format!("locking the process's memory failed ({e}): raise the memlock limit (/etc/security/limits.conf: '@realtime - memlock unlimited', as ros2_control's real-time setup does), or set realtime_priority to 0"),
    ))
}

fn pin_to(cpu: usize) -> Result<(), RuntimeError> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    // SAFETY: a cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(refused(
            "cpu_affinity",
            format!("CPU {cpu} does not exist ({cpus} available)"),
        ));
    }
    // SAFETY: `cpu` is within the set's bits (checked above); 0 names the calling thread.
    let pinned = unsafe {
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if pinned == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(refused(
        "cpu_affinity",
        format!("pinning the control thread to CPU {cpu} failed ({e}; {cpus} CPUs available to this process)"),
    ))
}

fn set_fifo(priority: i32) -> Result<(), RuntimeError> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: the calling thread's own handle and a valid parameter; the call returns an
    // error number instead of setting errno.
    let result =
        unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if result == 0 {
        return Ok(());
    }
    let e = std::io::Error::from_raw_os_error(result);
    Err(refused(
        "realtime_priority",
        format!("SCHED_FIFO priority {priority} refused ({e}): give the user a real-time priority limit (/etc/security/limits.conf: '@realtime - rtprio 99' and the user in group realtime, as ros2_control's real-time setup does; in a container, --cap-add SYS_NICE), or set realtime_priority to 0"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_control::Declaration;

    fn store(priority: i64, cpu: i64) -> ParameterStore {
        let mut store = ParameterStore::new(vec![
            Declaration::integer("realtime_priority", 0, ""),
            Declaration::integer("cpu_affinity", -1, ""),
        ]);
        store
            .set(
                "realtime_priority",
                &ParameterValue::Integer(priority),
                true,
            )
            .unwrap();
        store
            .set("cpu_affinity", &ParameterValue::Integer(cpu), true)
            .unwrap();
        store
    }

    #[test]
    fn nothing_is_done_by_default_or_without_the_parameters() {
        let off = RealtimeSettings::from_parameters(&store(0, -1));
        assert_eq!(off, RealtimeSettings::default());
        assert_eq!(off.apply_to_this_thread().unwrap(), None);
        let undeclared = RealtimeSettings::from_parameters(&ParameterStore::new(vec![]));
        assert_eq!(undeclared, RealtimeSettings::default());
    }

    #[test]
    fn a_cpu_that_does_not_exist_is_refused_naming_the_parameter() {
        let settings = RealtimeSettings::from_parameters(&store(0, 100_000));
        let e = settings.apply_to_this_thread().unwrap_err().to_string();
        assert!(
            e.contains("cpu_affinity") && e.contains("CPU 100000"),
            "{e}"
        );
    }
}
