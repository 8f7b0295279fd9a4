//! rosbag2 logs in MCAP (`ros2 bag record -s mcap /joint_states`): sensor_msgs/JointState
//! messages of a topic as a [`JointLog`] for identification, and the reverse for tools and
//! tests. Messages are CDR with the 4-byte encapsulation header, as rosbag2 stores them; the
//! sample time is the message stamp, or the time it was logged when no message is stamped.

use std::collections::BTreeMap;
use std::path::Path;

use armctl_ident::JointLog;
use byteorder::{BigEndian, LittleEndian};

use crate::msgs::{JointState, Time};
use crate::RosError;

/// sensor_msgs/msg/JointState in ROS 2's `ros2msg` schema encoding (with its dependencies).
const JOINT_STATE_DEFINITION: &str = "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\n================================================================================\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";

fn fail(path: &Path, reason: impl std::fmt::Display) -> RosError {
    RosError::Bag {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// One CDR message (encapsulation header, then the payload) as a joint state.
fn decode(data: &[u8]) -> Result<JointState, String> {
    let (header, payload) = data
        .split_at_checked(4)
        .ok_or("a message shorter than its CDR header")?;
    let decoded = match header[1] {
        1 => cdr_encoding::from_bytes::<JointState, LittleEndian>(payload),
        0 => cdr_encoding::from_bytes::<JointState, BigEndian>(payload),
        other => return Err(format!("unsupported CDR representation {other}")),
    };
    decoded.map(|(m, _)| m).map_err(|e| e.to_string())
}

/// The joint states on `topic` of an MCAP file, in time order, timed in seconds from the first;
/// joints are those of the first message (later ones are matched by name). Positions and
/// efforts are required, velocities used when every message has them.
pub fn read_joint_states(path: &Path, topic: &str) -> Result<JointLog, RosError> {
    let bytes = armctl_model::files::read_bounded(path, armctl_model::files::MAX_LOG_BYTES)
        .map_err(|e| fail(path, e))?;
    // The mcap crate panics on some corrupt files: a guard turns that into an error.
    std::panic::catch_unwind(|| joint_states_of(path, &bytes, topic))
        .unwrap_or_else(|_| Err(fail(path, "corrupt MCAP file (its reader gave up)")))
}

fn joint_states_of(path: &Path, bytes: &[u8], topic: &str) -> Result<JointLog, RosError> {
    // Nanoseconds: epoch times as f64 seconds would lose ~0.2 us, noise for differentiation.
    let mut samples: Vec<(i64, JointState)> = Vec::new();
    for message in mcap::MessageStream::new(bytes).map_err(|e| fail(path, e))? {
        let message = message.map_err(|e| fail(path, e))?;
        if message.channel.topic != topic {
            continue;
        }
        if message.channel.message_encoding != "cdr" {
            return Err(fail(
                path,
                format!(
                    "{topic} is encoded as '{}', not cdr",
                    message.channel.message_encoding
                ),
            ));
        }
        let state = decode(&message.data)
            .map_err(|e| fail(path, format!("message {}: {e}", message.sequence)))?;
        samples.push((message.log_time as i64, state));
    }
    let nanoseconds = |t: &Time| i64::from(t.sec) * 1_000_000_000 + i64::from(t.nanosec);
    if samples
        .iter()
        .any(|(_, s)| nanoseconds(&s.header.stamp) > 0)
    {
        // Stamped (a stamp of zero is then the start of simulated time, not a missing one).
        samples
            .iter_mut()
            .for_each(|(t, s)| *t = nanoseconds(&s.header.stamp));
    }
    samples.sort_by_key(|(t, _)| *t);
    to_log(samples).map_err(|reason| fail(path, format!("topic {topic}: {reason}")))
}

fn to_log(samples: Vec<(i64, JointState)>) -> Result<JointLog, String> {
    let first = samples
        .first()
        .ok_or("no sensor_msgs/JointState messages")?;
    let start = first.0;
    let names = first.1.name.clone();
    let with_velocity = samples
        .iter()
        .all(|(_, s)| s.velocity.len() == s.name.len());
    let mut log = JointLog {
        joint_names: names.clone(),
        velocity: with_velocity.then(Vec::new),
        ..JointLog::default()
    };
    for (stamp, state) in &samples {
        let time = (stamp - start) as f64 * 1e-9;
        let order = names
            .iter()
            .map(|n| {
                state
                    .name
                    .iter()
                    .position(|m| m == n)
                    .ok_or_else(|| format!("joint '{n}' is missing at t = {time}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pick = |v: &[f64], what: &str| -> Result<Vec<f64>, String> {
            order
                .iter()
                .zip(&names)
                .map(|(&i, name)| {
                    v.get(i)
                        .copied()
                        .ok_or_else(|| format!("no {what} for joint '{name}' at t = {time} s"))
                })
                .collect()
        };
        log.time.push(time);
        log.position.push(pick(&state.position, "position")?);
        log.effort.push(pick(&state.effort, "effort")?);
        if let Some(v) = &mut log.velocity {
            v.push(pick(&state.velocity, "velocity")?);
        }
    }
    log.check()?;
    Ok(log)
}

/// Writes joint states to an MCAP file as rosbag2 does: schema `sensor_msgs/msg/JointState`
/// (`ros2msg`), channel `topic` with CDR messages.
pub fn write_joint_states(path: &Path, topic: &str, states: &[JointState]) -> Result<(), RosError> {
    let file = std::fs::File::create(path).map_err(|e| fail(path, e))?;
    let mut writer = mcap::Writer::new(std::io::BufWriter::new(file)).map_err(|e| fail(path, e))?;
    let schema = writer
        .add_schema(
            "sensor_msgs/msg/JointState",
            "ros2msg",
            JOINT_STATE_DEFINITION.as_bytes(),
        )
        .map_err(|e| fail(path, e))?;
    let channel = writer
        .add_channel(schema, topic, "cdr", &BTreeMap::new())
        .map_err(|e| fail(path, e))?;
    for (sequence, state) in states.iter().enumerate() {
        let mut data = vec![0, 1, 0, 0];
        data.extend(
            cdr_encoding::to_vec::<JointState, LittleEndian>(state).map_err(|e| fail(path, e))?,
        );
        let Time { sec, nanosec } = state.header.stamp;
        let time = sec as u64 * 1_000_000_000 + nanosec as u64;
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: sequence as u32,
            log_time: time,
            publish_time: time,
        };
        writer
            .write_to_known_channel(&header, &data)
            .map_err(|e| fail(path, e))?;
    }
    writer.finish().map_err(|e| fail(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::Header;

    #[test]
    fn joint_states_round_trip_through_an_mcap_file() {
        let path = std::env::temp_dir().join(format!("armctl-bag-{}.mcap", std::process::id()));
        let states: Vec<JointState> = (0..50)
            .map(|k| {
                let t = 1.0 + k as f64 * 1e-3;
                // Joints listed in another order every other message.
                let (name, sign) = if k % 2 == 0 {
                    (vec!["a".into(), "b".into()], 1.0)
                } else {
                    (vec!["b".into(), "a".into()], -1.0)
                };
                let v = [t, 2.0 * t];
                let ordered = |x: [f64; 2]| {
                    if sign > 0.0 {
                        x.to_vec()
                    } else {
                        vec![x[1], x[0]]
                    }
                };
                JointState {
                    header: Header {
                        stamp: Time::from_seconds(t),
                        frame_id: String::new(),
                    },
                    name,
                    position: ordered(v),
                    velocity: ordered([0.5, 0.25]),
                    effort: ordered([3.0, -1.0]),
                }
            })
            .collect();
        write_joint_states(&path, "/joint_states", &states).unwrap();
        let log = read_joint_states(&path, "/joint_states").unwrap();
        assert_eq!(log.joint_names, vec!["a", "b"]);
        assert_eq!(log.len(), 50);
        // Seconds from the first message.
        assert!((log.time[3] - 0.003).abs() < 1e-12);
        assert!(
            (log.position[3][1] - 2.006).abs() < 1e-9,
            "{:?}",
            log.position[3]
        );
        assert_eq!(log.effort[7], vec![3.0, -1.0]);
        assert_eq!(log.velocity.as_ref().unwrap()[8], vec![0.5, 0.25]);
        let missing = read_joint_states(&path, "/other").unwrap_err().to_string();
        assert!(missing.contains("no sensor_msgs/JointState"), "{missing}");
        std::fs::remove_file(&path).unwrap();
    }
}
