//! controller_node's health on `/diagnostics` (diagnostic_msgs/DiagnosticArray), once a
//! second, as diagnostic_updater reports: one status, "<node>: control loop", whose level is
//! STALE before the first joint state, ERROR while holding, WARN when the last second had
//! late cycles, efforts clipped at their limits or refused parameters, OK otherwise. The loop timing is
//! wall-clock time between control steps, whatever clock the node runs on: it is the
//! process's real-time behaviour that is reported.

use std::time::Instant;

use armctl_runtime::controller_core::Fault;

use crate::msgs::{DiagnosticArray, DiagnosticStatus, KeyValue, Time};

/// Seconds between reports.
const REPORT_PERIOD: f64 = 1.0;
/// A cycle is late when its period exceeds the nominal one by this factor.
const LATE_FACTOR: f64 = 1.5;

/// What a report says of the controlled arm(s) besides the loop's timing.
#[derive(Debug)]
pub(crate) struct LoopState<'a> {
    /// The control law.
    pub(crate) law: &'a str,
    /// Why the node holds, if it does.
    pub(crate) fault: Option<Fault>,
    /// When the (oldest arm's) newest joint state arrived, on the node's clock.
    pub(crate) state_time: Option<f64>,
}

/// Counts over the current report's window and since the start.
#[derive(Debug)]
pub(crate) struct LoopDiagnostics {
    /// The nominal control period (s), with a control rate; none per message.
    nominal_period: Option<f64>,
    window_start: Instant,
    last_step: Option<Instant>,
    steps: u64,
    period_sum: f64,
    period_max: f64,
    jitter_max: f64,
    late: u64,
    late_total: u64,
    saturated_before: u64,
    /// The joint-limited count at the last report.
    limited_before: u64,
    refusals: u64,
    refusals_before: u64,
    message: DiagnosticArray,
}

/// Each value's key, in the order of the report.
const KEYS: [&str; 14] = [
    "controller",
    "holding",
    "joint state age (s)",
    "steps in the last second",
    "mean period (ms)",
    "longest period (ms)",
    "period jitter (ms)",
    "late cycles in the last second",
    "late cycles since start",
    "clipped efforts in the last second",
    "clipped efforts since start",
    "efforts bounded at soft joint limits in the last second",
    "efforts bounded at soft joint limits since start",
    "parameter changes refused since start",
];

impl LoopDiagnostics {
    /// For the node `node` (fully qualified) controlling `robot`, at `update_rate` Hz (0: one
    /// step per joint state).
    pub(crate) fn new(node: &str, robot: &str, update_rate: f64) -> Self {
        let status = DiagnosticStatus {
            name: format!("{}: control loop", node.trim_start_matches('/')),
            hardware_id: robot.to_string(),
            values: KEYS
                .iter()
                .map(|k| KeyValue {
                    key: k.to_string(),
                    value: String::new(),
                })
                .collect(),
            ..DiagnosticStatus::default()
        };
        Self {
            nominal_period: (update_rate > 0.0).then(|| 1.0 / update_rate),
            window_start: Instant::now(),
            last_step: None,
            steps: 0,
            period_sum: 0.0,
            period_max: 0.0,
            jitter_max: 0.0,
            late: 0,
            late_total: 0,
            saturated_before: 0,
            limited_before: 0,
            refusals: 0,
            refusals_before: 0,
            message: DiagnosticArray {
                status: vec![status],
                ..DiagnosticArray::default()
            },
        }
    }

    /// A control step ran now.
    pub(crate) fn on_step(&mut self) {
        let now = Instant::now();
        if let Some(last) = self.last_step.replace(now) {
            let period = now.duration_since(last).as_secs_f64();
            self.steps += 1;
            self.period_sum += period;
            self.period_max = self.period_max.max(period);
            if let Some(nominal) = self.nominal_period {
                self.jitter_max = self.jitter_max.max((period - nominal).abs());
                if period > LATE_FACTOR * nominal {
                    self.late += 1;
                    self.late_total += 1;
                }
            }
        }
    }

    /// A parameter change was refused.
    pub(crate) fn on_refusal(&mut self) {
        self.refusals += 1;
    }

    /// Whether a report is due.
    pub(crate) fn due(&self) -> bool {
        self.window_start.elapsed().as_secs_f64() >= REPORT_PERIOD
    }

    /// The report at `now` (the node's clock) and starts the next window; `saturated` counts
    /// the joint efforts clipped at their limits since the start, `limited` those the
    /// joint-limit protection bounded.
    pub(crate) fn report(
        &mut self,
        state: LoopState<'_>,
        now: f64,
        (saturated, limited): (u64, u64),
    ) -> &DiagnosticArray {
        let fault = state.fault.as_ref();
        let new_saturated = saturated - self.saturated_before.min(saturated);
        let new_limited = limited - self.limited_before.min(limited);
        let new_refusals = self.refusals - self.refusals_before;
        let mean = if self.steps > 0 {
            self.period_sum / self.steps as f64
        } else {
            0.0
        };
        let status = &mut self.message.status[0];
        let (level, summary) = match fault {
            Some(Fault::NoState) => (DiagnosticStatus::STALE, "no joint state yet".to_string()),
            Some(fault) => (DiagnosticStatus::ERROR, format!("holding: {fault}")),
            None if self.late + new_saturated + new_limited + new_refusals > 0 => (
                DiagnosticStatus::WARN,
                format!(
                    "{} late cycles, {new_saturated} clipped efforts, {new_limited} efforts bounded at soft joint limits, {new_refusals} refused parameter changes in the last second",
                    self.late
                ),
            ),
            None => (DiagnosticStatus::OK, "controlling".to_string()),
        };
        status.level = level;
        status.message = summary;
        let age = state.state_time.map(|t| now - t);
        let values: [String; 14] = [
            state.law.to_string(),
            fault.map_or("no".into(), |f| format!("yes: {f}")),
            age.map_or("no state yet".into(), |a| format!("{a:.4}")),
            self.steps.to_string(),
            format!("{:.3}", 1e3 * mean),
            format!("{:.3}", 1e3 * self.period_max),
            self.nominal_period.map_or("per joint state".into(), |_| {
                format!("{:.3}", 1e3 * self.jitter_max)
            }),
            self.late.to_string(),
            self.late_total.to_string(),
            new_saturated.to_string(),
            saturated.to_string(),
            new_limited.to_string(),
            limited.to_string(),
            self.refusals.to_string(),
        ];
        for (kv, value) in status.values.iter_mut().zip(values) {
            kv.value = value;
        }
        self.message.header.stamp = Time::from_seconds(now.max(0.0));
        self.window_start = Instant::now();
        (self.steps, self.period_sum, self.period_max) = (0, 0.0, 0.0);
        (self.jitter_max, self.late) = (0.0, 0);
        self.saturated_before = saturated;
        self.limited_before = limited;
        self.refusals_before = self.refusals;
        &self.message
    }
}
