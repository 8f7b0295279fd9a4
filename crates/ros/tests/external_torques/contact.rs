//! What the table test watches: the controller's `~/state`, its estimate of the tip wrench
//! and the flange sensor's reading, averaged over seconds of steady contact.

use std::time::Duration;

use armctl_nodes::msgs::{labelled_block, JointState, WrenchStamped};
use armctl_nodes::transport::{Incoming, Transport};

/// Subscription slots of the test's node.
pub(crate) const STATE: usize = 0;
pub(crate) const ESTIMATE: usize = 1;
pub(crate) const SENSOR: usize = 2;
pub(crate) const TORQUES: usize = 3;
pub(crate) const BOUNDS: usize = 4;

/// What the test has seen last.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) controlling: bool,
    pub(crate) estimate: Option<WrenchStamped>,
    pub(crate) sensor: Option<WrenchStamped>,
    pub(crate) torques: Option<JointState>,
    pub(crate) bounds: Option<JointState>,
    /// Whether the forces are being summed (for a mean over a window).
    pub(crate) averaging: bool,
    pub(crate) estimate_sum: Samples,
    pub(crate) sensor_sum: Samples,
    /// Whether the controller held (did not control) at any state of the window.
    pub(crate) held_in_window: bool,
}

/// Forces received in a window, in order.
#[derive(Default)]
pub(crate) struct Samples(Vec<[f64; 3]>);

impl Samples {
    pub(crate) fn add(&mut self, f: [f64; 3]) {
        self.0.push(f);
    }

    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn mean(&self) -> [f64; 3] {
        mean(&self.0)
    }

    /// How far apart (N, the widest component) the means of runs of `run` consecutive samples
    /// lie: the contact's drift and shifts, without the contact's chatter of a few N at 1 kHz.
    pub(crate) fn drift(&self, run: usize) -> f64 {
        let means: Vec<[f64; 3]> = self.0.chunks_exact(run).map(mean).collect();
        (0..3)
            .map(|i| {
                let (low, high) = means
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(l, h), m| (l.min(m[i]), h.max(m[i])));
                if means.is_empty() {
                    0.0
                } else {
                    high - low
                }
            })
            .fold(0.0, f64::max)
    }
}

pub(crate) fn mean(forces: &[[f64; 3]]) -> [f64; 3] {
    let mut sum = [0.0; 3];
    for f in forces {
        for (s, v) in sum.iter_mut().zip(f) {
            *s += v;
        }
    }
    sum.map(|s| s / forces.len().max(1) as f64)
}

impl Seen {
    pub(crate) async fn take<T: Transport>(&mut self, node: &mut T) {
        let Some(incoming) = node.next().await else {
            return;
        };
        match (node.received_on(), incoming) {
            (STATE, Incoming::State(s)) => {
                self.controlling = labelled_block(&s, "holding") == Some(&[0.0][..]);
                self.held_in_window |= self.averaging && !self.controlling;
            }
            (ESTIMATE, Incoming::ExternalWrenchEstimate(w)) => {
                if self.averaging {
                    self.estimate_sum.add(force(&w));
                }
                self.estimate = Some(w);
            }
            (SENSOR, Incoming::ExternalWrench(w)) => {
                if self.averaging {
                    self.sensor_sum.add(force(&w));
                }
                self.sensor = Some(w);
            }
            (TORQUES, Incoming::ExternalTorques(t)) => self.torques = Some(t),
            (BOUNDS, Incoming::ExternalTorqueBounds(b)) => self.bounds = Some(b),
            _ => {}
        }
    }
}

pub(crate) fn force(w: &WrenchStamped) -> [f64; 3] {
    [w.wrench.force.x, w.wrench.force.y, w.wrench.force.z]
}

/// Sensor readings (1 kHz) averaged together to judge the contact's drift: 0.1 s.
pub(crate) const SENSOR_RUN: usize = 100;

/// How far apart (N) the sensor's 0.1 s means may lie in a second of contact called steady.
pub(crate) const STEADY_DRIFT: f64 = 2.5;

/// The sensor readings (1 kHz) of a second in which sim_node kept time: 80 % (beside two CPU
/// hogs it publishes 800-900). A simulator further behind applies each command later and
/// longer than the controller's observer, which integrates the commands as sent, assumes: on a
/// busy machine, at 500-750 readings a second, the estimate was seen 1-6 N off for seconds
/// (the bound published with it allows for one step of command delay).
pub(crate) const ON_TIME_READINGS: usize = 800;

/// Takes messages for `time`.
pub(crate) async fn pass<T: Transport>(node: &mut T, seen: &mut Seen, time: Duration) {
    let until = tokio::time::Instant::now() + time;
    while tokio::time::Instant::now() < until {
        let _ = tokio::time::timeout_at(until, seen.take(node)).await;
    }
}

/// Averages the estimate and the sensor over the next second; what it saw, as a line.
pub(crate) async fn contact_second<T: Transport>(node: &mut T, seen: &mut Seen) -> String {
    seen.estimate_sum = Samples::default();
    seen.sensor_sum = Samples::default();
    seen.held_in_window = false;
    seen.averaging = true;
    pass(node, seen, Duration::from_secs(1)).await;
    seen.averaging = false;
    format!(
        "tip force, tip link axes, means over a second: estimated {:.3?} N ({} samples), \
         the sensor {:.3?} N ({} samples, drift {:.3} N), held: {}",
        seen.estimate_sum.mean(),
        seen.estimate_sum.count(),
        seen.sensor_sum.mean(),
        seen.sensor_sum.count(),
        seen.sensor_sum.drift(SENSOR_RUN),
        seen.held_in_window
    )
}
