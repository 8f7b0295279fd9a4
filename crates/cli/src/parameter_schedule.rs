//! `armctl sim --set-at T:NAME:=VALUE`: parameters set during a run at a simulated time, as
//! `ros2 param set` sets them on a running controller_node (checked and applied the same way).

use anyhow::{bail, Context, Result};
use armctl_control::ParameterValue;
use armctl_runtime::params_file::value_from_text;

/// One parameter set at a time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScheduledSet {
    /// Simulated time, s.
    pub time: f64,
    pub name: String,
    pub value: ParameterValue,
    /// As given, for messages.
    pub text: String,
}

/// The `--set-at` sets in time order (sets at one time in the order given), each at a time a
/// step of the run is nearest: from 0 to half a step after the last step, at `last_step` s.
pub(crate) fn parse(texts: &[String], last_step: f64, dt: f64) -> Result<Vec<ScheduledSet>> {
    let mut sets = texts
        .iter()
        .map(|text| parse_one(text, last_step + 0.5 * dt))
        .collect::<Result<Vec<_>>>()?;
    sets.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(sets)
}

fn parse_one(text: &str, latest: f64) -> Result<ScheduledSet> {
    let usage =
        || format!("--set-at '{text}': give T:NAME:=VALUE (T in s, e.g. 2.5:kp:=[100, 100])");
    let (time, assignment) = text.split_once(':').with_context(usage)?;
    let (name, value) = assignment.split_once(":=").with_context(usage)?;
    let time: f64 = time.trim().parse().ok().with_context(usage)?;
    if !(0.0..=latest).contains(&time) {
        bail!("--set-at '{text}': the time {time} s is outside the run's steps [0, {latest}] s");
    }
    let name = name.trim();
    if name.is_empty() {
        bail!(usage());
    }
    let value =
        value_from_text(name, value.trim()).with_context(|| format!("--set-at '{text}'"))?;
    Ok(ScheduledSet {
        time,
        name: name.to_string(),
        value,
        text: text.to_string(),
    })
}

/// The sets still to apply, in time order.
#[derive(Debug)]
pub(crate) struct ParameterSchedule {
    pending: std::collections::VecDeque<ScheduledSet>,
    /// The first set refused, with its time and reason: it ends the run's result.
    pub refused: Option<String>,
}

impl ParameterSchedule {
    pub(crate) fn new(sets: Vec<ScheduledSet>) -> Self {
        Self {
            pending: sets.into(),
            refused: None,
        }
    }

    /// Applies through `set` every set due at the step starting at `t` (the step nearest its
    /// time: at most half a step ahead), as `ros2 param set` would; what happened, one line
    /// each, goes to `events`.
    pub(crate) fn apply_due(
        &mut self,
        t: f64,
        dt: f64,
        events: &mut Vec<String>,
        mut set: impl FnMut(&str, &ParameterValue) -> Result<ParameterValue, String>,
    ) {
        while self.pending.front().is_some_and(|s| s.time <= t + 0.5 * dt) {
            let Some(due) = self.pending.pop_front() else {
                return;
            };
            // Logged as controller_node logs a set: the value asked for (a trigger reads
            // false again at once).
            match set(&due.name, &due.value) {
                Ok(_) => events.push(format!(
                    "t = {t:.3} s: parameter {} set to {}",
                    due.name,
                    due.value.to_yaml()
                )),
                Err(reason) => {
                    events.push(format!(
                        "t = {t:.3} s: parameter {} not set: {reason}",
                        due.name
                    ));
                    self.refused.get_or_insert(format!(
                        "--set-at '{}': refused at t = {t:.3} s: {reason}",
                        due.text
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sets_are_read_in_time_order_and_bad_ones_named() {
        let sets = parse(
            &texts(&["2:kp:=[1, 2]", "0.5:estimate_payload:=true"]),
            4.999,
            1e-3,
        )
        .unwrap();
        assert_eq!(sets[0].name, "estimate_payload");
        assert_eq!(sets[0].value, ParameterValue::Bool(true));
        assert_eq!(sets[1].time, 2.0);
        assert_eq!(sets[1].value, ParameterValue::DoubleArray(vec![1.0, 2.0]));
        for bad in [
            "kp:=1",
            "2:kp=1",
            "x:kp:=1",
            "2::=1",
            "5:kp:=1",
            "-1:kp:=1",
            "nan:kp:=1",
        ] {
            let error = parse(&texts(&[bad]), 4.999, 1e-3).unwrap_err().to_string();
            assert!(error.contains(bad), "{bad}: {error}");
        }
    }

    #[test]
    fn a_set_applies_at_its_step_and_a_refusal_is_kept() {
        let sets = parse(&texts(&["0.002:kp:=1", "0.002:kd:=-1"]), 0.999, 1e-3).unwrap();
        let mut schedule = ParameterSchedule::new(sets);
        let mut events = Vec::new();
        let mut applied = Vec::new();
        for k in 0..4 {
            schedule.apply_due(k as f64 * 1e-3, 1e-3, &mut events, |name, value| {
                applied.push((k, name.to_string()));
                match name {
                    "kd" => Err("below its range".into()),
                    _ => Ok(value.clone()),
                }
            });
        }
        assert_eq!(applied, [(2, "kp".to_string()), (2, "kd".to_string())]);
        assert_eq!(events[0], "t = 0.002 s: parameter kp set to 1");
        assert!(
            events[1].contains("kd not set: below its range"),
            "{events:?}"
        );
        let refused = schedule.refused.unwrap();
        assert!(refused.contains("'0.002:kd:=-1'") && refused.contains("below its range"));
    }
}
