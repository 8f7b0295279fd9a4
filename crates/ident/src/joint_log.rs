//! A log of joint states and efforts, from CSV: a column `t` (s), then per joint `q_<name>`,
//! optionally `qd_<name>` and `qdd_<name>`, and `effort_<name>` (or `tau_<name>`). The joints
//! are those of the `q_` columns, in their order; `armctl sim` and `armctl demo` write such
//! files (`run.csv`).

use std::path::Path;

use crate::IdentError;

/// Joint positions, velocities, accelerations and efforts over time (one row per sample).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointLog {
    /// Joint names, in the column order of the rows.
    pub joint_names: Vec<String>,
    /// Sample times, s, increasing.
    pub time: Vec<f64>,
    /// Positions.
    pub position: Vec<Vec<f64>>,
    /// Velocities, when logged.
    pub velocity: Option<Vec<Vec<f64>>>,
    /// Accelerations, when logged.
    pub acceleration: Option<Vec<Vec<f64>>>,
    /// Measured efforts.
    pub effort: Vec<Vec<f64>>,
}

fn fail(path: &Path, reason: impl Into<String>) -> IdentError {
    IdentError::Log {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Column indices of `prefix<joint>` for each joint, all or none.
fn columns(
    header: &[String],
    prefix: &str,
    joints: &[String],
    path: &Path,
) -> Result<Option<Vec<usize>>, IdentError> {
    let found: Vec<Option<usize>> = joints
        .iter()
        .map(|j| header.iter().position(|h| *h == format!("{prefix}{j}")))
        .collect();
    match found.iter().filter(|f| f.is_some()).count() {
        0 => Ok(None),
        k if k == joints.len() => Ok(Some(found.into_iter().flatten().collect())),
        _ => Err(fail(
            path,
            format!("some joints lack a {prefix}<joint> column"),
        )),
    }
}

impl JointLog {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Reads a CSV log.
    pub fn read_csv(path: &Path) -> Result<Self, IdentError> {
        armctl_model::files::check_regular_file(path, armctl_model::files::MAX_LOG_BYTES)
            .map_err(|e| fail(path, e))?;
        let mut reader = csv::Reader::from_path(path).map_err(|e| fail(path, e.to_string()))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| fail(path, e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        if let Some((_, twice)) = header
            .iter()
            .enumerate()
            .find(|(k, h)| header[..*k].contains(h))
        {
            return Err(fail(
                path,
                format!("column '{twice}' appears twice: which one is meant cannot be known"),
            ));
        }
        let t = header
            .iter()
            .position(|h| h == "t" || h == "time")
            .ok_or_else(|| fail(path, "no 't' column"))?;
        let joints: Vec<String> = header
            .iter()
            .filter_map(|h| h.strip_prefix("q_"))
            .filter(|j| !j.starts_with("ref_"))
            .map(str::to_string)
            .collect();
        if joints.is_empty() {
            return Err(fail(path, "no q_<joint> columns"));
        }
        let q = columns(&header, "q_", &joints, path)?.unwrap_or_default();
        let qd = columns(&header, "qd_", &joints, path)?;
        let qdd = columns(&header, "qdd_", &joints, path)?;
        let effort = match columns(&header, "effort_", &joints, path)? {
            Some(c) => c,
            None => columns(&header, "tau_", &joints, path)?
                .ok_or_else(|| fail(path, "no effort_<joint> or tau_<joint> columns"))?,
        };
        let mut log = JointLog {
            joint_names: joints,
            velocity: qd.as_ref().map(|_| vec![]),
            acceleration: qdd.as_ref().map(|_| vec![]),
            ..JointLog::default()
        };
        for (line, record) in reader.records().enumerate() {
            let record = record.map_err(|e| fail(path, e.to_string()))?;
            let value = |c: usize| -> Result<f64, IdentError> {
                record
                    .get(c)
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        fail(
                            path,
                            format!(
                                "row {}: column '{}' is not a finite number",
                                line + 2,
                                header[c]
                            ),
                        )
                    })
            };
            let pick = |cols: &[usize]| {
                cols.iter()
                    .map(|&c| value(c))
                    .collect::<Result<Vec<f64>, _>>()
            };
            log.time.push(value(t)?);
            log.position.push(pick(&q)?);
            log.effort.push(pick(&effort)?);
            if let (Some(cols), Some(rows)) = (&qd, &mut log.velocity) {
                rows.push(pick(cols)?);
            }
            if let (Some(cols), Some(rows)) = (&qdd, &mut log.acceleration) {
                rows.push(pick(cols)?);
            }
        }
        log.check().map_err(|reason| fail(path, reason))?;
        Ok(log)
    }

    /// Writes the log as CSV (the format [`JointLog::read_csv`] reads).
    pub fn write_csv(&self, path: &Path) -> Result<(), IdentError> {
        let mut writer = csv::Writer::from_path(path).map_err(|e| fail(path, e.to_string()))?;
        let mut header = vec!["t".to_string()];
        let with =
            |prefix: &'static str| self.joint_names.iter().map(move |j| format!("{prefix}{j}"));
        header.extend(with("q_"));
        if self.velocity.is_some() {
            header.extend(with("qd_"));
        }
        if self.acceleration.is_some() {
            header.extend(with("qdd_"));
        }
        header.extend(with("effort_"));
        writer
            .write_record(&header)
            .map_err(|e| fail(path, e.to_string()))?;
        for k in 0..self.len() {
            let mut row = vec![self.time[k]];
            row.extend(&self.position[k]);
            for block in [&self.velocity, &self.acceleration].into_iter().flatten() {
                row.extend(&block[k]);
            }
            row.extend(&self.effort[k]);
            writer
                .write_record(row.iter().map(|v| format!("{v:?}")))
                .map_err(|e| fail(path, e.to_string()))?;
        }
        writer.flush().map_err(|e| fail(path, e.to_string()))
    }

    /// The log with its joints in `names`' order (every name must be logged; others dropped).
    pub fn for_joints(&self, names: &[String]) -> Result<Self, IdentError> {
        let order = names
            .iter()
            .map(|n| {
                self.joint_names.iter().position(|j| j == n).ok_or_else(|| {
                    IdentError::Identification {
                        reason: format!("joint '{n}' is not in the log"),
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pick = |rows: &Vec<Vec<f64>>| {
            rows.iter()
                .map(|r| order.iter().map(|&i| r[i]).collect())
                .collect()
        };
        Ok(JointLog {
            joint_names: names.to_vec(),
            time: self.time.clone(),
            position: pick(&self.position),
            velocity: self.velocity.as_ref().map(pick),
            acceleration: self.acceleration.as_ref().map(pick),
            effort: pick(&self.effort),
        })
    }

    /// Same lengths, increasing time, every value a number (naming the first that is not).
    pub fn check(&self) -> Result<(), String> {
        let n = self.joint_names.len();
        let rows = [
            Some(&self.position),
            self.velocity.as_ref(),
            self.acceleration.as_ref(),
            Some(&self.effort),
        ];
        if rows
            .iter()
            .flatten()
            .any(|r| r.len() != self.time.len() || r.iter().any(|v| v.len() != n))
        {
            return Err("columns of different lengths".into());
        }
        if self.time.windows(2).any(|w| w[1] <= w[0]) {
            return Err("time must increase from row to row".into());
        }
        let named = [
            ("position", Some(&self.position)),
            ("velocity", self.velocity.as_ref()),
            ("acceleration", self.acceleration.as_ref()),
            ("effort", Some(&self.effort)),
        ];
        for (what, rows) in named {
            let Some(rows) = rows else { continue };
            for (k, row) in rows.iter().enumerate() {
                if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                    return Err(format!(
                        "the {what} of joint '{}' at t = {} s is {}",
                        self.joint_names[j], self.time[k], row[j]
                    ));
                }
            }
        }
        if self.len() < 10 {
            return Err(format!("{} samples are too few", self.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_is_not_a_number_is_refused_by_joint_and_time() {
        let mut log = JointLog {
            joint_names: vec!["a".into(), "b".into()],
            ..JointLog::default()
        };
        for k in 0..20 {
            log.time.push(k as f64 * 0.01);
            log.position.push(vec![0.0, 0.0]);
            log.effort
                .push(vec![1.0, if k == 7 { f64::NAN } else { 1.0 }]);
        }
        let reason = log.check().unwrap_err();
        assert!(
            reason.contains("effort of joint 'b' at t = 0.07 s is NaN"),
            "{reason}"
        );
    }
}
