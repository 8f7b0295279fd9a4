//! rosbag2 logs (`ros2 bag record /joint_states`: SQLite `.db3` files, Humble's default, or
//! MCAP, Jazzy's; a bag directory or one file): sensor_msgs/JointState messages of a topic as a
//! [`JointLog`] for identification, and the reverse (MCAP) for tools and tests. Messages are CDR with the 4-byte encapsulation header, as rosbag2 stores them; the
//! sample time is the message stamp, or the time it was logged when no message is stamped.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use armctl_ident::JointLog;
use byteorder::{BigEndian, LittleEndian};
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

use crate::msgs::{JointState, Time};
use crate::RosError;

mod directory;

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

/// Longest MCAP record read, bytes: far above a joint state (or a camera image on another
/// topic of the bag), and what a corrupt length inside a compressed chunk can make the reader
/// allocate (without the bound, mcap sizes its buffer by that length: up to 2^64 bytes).
const MAX_RECORD_BYTES: usize = 128 << 20;

/// MCAP record opcodes.
const OP_CHANNEL: u8 = 0x04;
const OP_MESSAGE: u8 = 0x05;

/// The joint states on `topic` of a rosbag2 recording, in time order, timed in seconds from the
/// first; joints are those of the first message (later ones are matched by name). Positions
/// and efforts are required, velocities used when every message has them; every value is
/// finite. `path` is a bag directory (its `metadata.yaml` lists the files and their storage), a
/// `.db3` file (SQLite, Humble's default storage) or an MCAP file.
pub fn read_joint_states(path: &Path, topic: &str) -> Result<JointLog, RosError> {
    let samples = if path.is_dir() {
        directory::samples(path, topic)?
    } else if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("db3"))
    {
        sqlite_samples(path, topic)?
    } else {
        mcap_samples(path, topic)?
    };
    to_joint_log(samples).map_err(|reason| fail(path, format!("topic {topic}: {reason}")))
}

/// Joint states with their log times (ns).
type Samples = Vec<(i64, JointState)>;

/// The joint states on `topic` of an MCAP file, in file order, with their log times (ns).
fn mcap_samples(path: &Path, topic: &str) -> Result<Samples, RosError> {
    let bytes = armctl_model::files::read_bounded(path, armctl_model::files::MAX_LOG_BYTES)
        .map_err(|e| fail(path, e))?;
    // The mcap crate panics on some corrupt files: a guard turns that into an error.
    std::panic::catch_unwind(|| topic_samples(&bytes, topic).map_err(|e| fail(path, e)))
        .unwrap_or_else(|_| Err(fail(path, "corrupt MCAP file (its reader gave up)")))
}

/// The joint states on `topic` of a rosbag2 SQLite file (`.db3`), in time order, with their
/// log times (ns): the `topics` table names the topic's id, type and serialization, the
/// `messages` table holds the CDR messages.
fn sqlite_samples(path: &Path, topic: &str) -> Result<Vec<(i64, JointState)>, RosError> {
    use rusqlite::{Connection, OpenFlags};
    armctl_model::files::check_regular_file(path, armctl_model::files::MAX_LOG_BYTES)
        .map_err(|e| fail(path, e))?;
    let sql = |e: rusqlite::Error| fail(path, format!("not a readable rosbag2 SQLite file: {e}"));
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    let mut topics = db
        .prepare("SELECT id, name, type, serialization_format FROM topics")
        .map_err(sql)?;
    let topics: Vec<(i64, String, String, String)> = topics
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    let Some((id, _, kind, format)) = topics.iter().find(|t| t.1 == topic) else {
        let names: Vec<String> = topics.iter().map(|t| armctl_control::shown(&t.1)).collect();
        return Err(fail(
            path,
            format!("no topic {topic} (the bag has: {})", names.join(", ")),
        ));
    };
    if kind != "sensor_msgs/msg/JointState" || format != "cdr" {
        let (kind, format) = (armctl_control::shown(kind), armctl_control::shown(format));
        return Err(fail(
            path,
            format!("{topic} carries {kind} as '{format}', not sensor_msgs/msg/JointState as cdr"),
        ));
    }
    let mut messages = db
        .prepare("SELECT timestamp, data FROM messages WHERE topic_id = ?1 ORDER BY timestamp")
        .map_err(sql)?;
    let rows = messages
        .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .map_err(sql)?;
    let mut samples = Vec::new();
    for row in rows {
        let (time, data) = row.map_err(sql)?;
        let state = decode(&data).map_err(|e| {
            fail(
                path,
                format!("{topic}: the message logged at {time} ns: {e}"),
            )
        })?;
        samples.push((time, state));
    }
    Ok(samples)
}

/// Samples with their log times as a joint log: timed by their stamps when stamped.
fn to_joint_log(mut samples: Vec<(i64, JointState)>) -> Result<JointLog, String> {
    // Nanoseconds: epoch times as f64 seconds would lose ~0.2 us, noise for differentiation.
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
    to_log(samples)
}

/// The joint states on `topic`, in file order, with their log times (ns). mcap frames the
/// records (chunks, compression, CRCs), within [`MAX_RECORD_BYTES`]; channels and messages are
/// read here, every length checked against the record.
fn topic_samples(bytes: &[u8], topic: &str) -> Result<Vec<(i64, JointState)>, String> {
    let options = LinearReaderOptions::default()
        .with_validate_chunk_crcs(true)
        .with_record_length_limit(MAX_RECORD_BYTES);
    let mut reader = LinearReader::new_with_options(options);
    let mut rest = bytes;
    let mut channels: HashMap<u16, Channel> = HashMap::new();
    let mut samples = Vec::new();
    while let Some(event) = reader.next_event() {
        match event.map_err(|e| e.to_string())? {
            LinearReadEvent::ReadRequest(need) => {
                let n = need.min(rest.len());
                reader.insert(n).copy_from_slice(&rest[..n]);
                reader.notify_read(n);
                rest = &rest[n..];
            }
            LinearReadEvent::Record {
                opcode: OP_CHANNEL,
                data,
            } => add_channel(&mut channels, data)?,
            LinearReadEvent::Record {
                opcode: OP_MESSAGE,
                data,
            } => samples.extend(sample(&channels, data, topic)?),
            LinearReadEvent::Record { .. } => {}
        }
    }
    Ok(samples)
}

/// A channel of an MCAP file.
#[derive(Debug, PartialEq)]
struct Channel {
    topic: String,
    encoding: String,
}

/// `N` little-endian bytes of `body` at `at`.
fn field<const N: usize>(body: &[u8], at: usize) -> Option<[u8; N]> {
    body.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The length-prefixed string at `*at`, which moves past it.
fn string(body: &[u8], at: &mut usize) -> Option<String> {
    let len = u32::from_le_bytes(field(body, *at)?) as usize;
    let text = body.get(*at + 4..(*at + 4).checked_add(len)?)?;
    *at += 4 + len;
    String::from_utf8(text.to_vec()).ok()
}

/// A channel record (id, schema id, topic, message encoding, metadata) added to `channels`.
fn add_channel(channels: &mut HashMap<u16, Channel>, body: &[u8]) -> Result<(), String> {
    let malformed = || "a malformed channel record".to_string();
    let id = u16::from_le_bytes(field(body, 0).ok_or_else(malformed)?);
    let mut at = 4;
    let topic = string(body, &mut at).ok_or_else(malformed)?;
    let encoding = string(body, &mut at).ok_or_else(malformed)?;
    let channel = Channel { topic, encoding };
    match channels.get(&id) {
        Some(known) if *known != channel => {
            Err(format!("channel {id} is defined twice, differently"))
        }
        _ => {
            channels.insert(id, channel);
            Ok(())
        }
    }
}

/// A message record (channel id, sequence, log time, publish time, data) as a joint state
/// with its log time, when it is on `topic`.
fn sample(
    channels: &HashMap<u16, Channel>,
    body: &[u8],
    topic: &str,
) -> Result<Option<(i64, JointState)>, String> {
    let malformed = || "a malformed message record".to_string();
    let channel_id = u16::from_le_bytes(field(body, 0).ok_or_else(malformed)?);
    let sequence = u32::from_le_bytes(field(body, 2).ok_or_else(malformed)?);
    let log_time = u64::from_le_bytes(field(body, 6).ok_or_else(malformed)?);
    let channel = channels.get(&channel_id).ok_or_else(|| {
        format!("message {sequence} is on channel {channel_id}, not defined before it")
    })?;
    if channel.topic != topic {
        return Ok(None);
    }
    if channel.encoding != "cdr" {
        let encoding = armctl_control::shown(&channel.encoding);
        return Err(format!("{topic} is encoded as '{encoding}', not cdr"));
    }
    let time = i64::try_from(log_time)
        .map_err(|_| format!("message {sequence}: log time {log_time} ns is past the year 2262"))?;
    let state =
        decode(&body[22.min(body.len())..]).map_err(|e| format!("message {sequence}: {e}"))?;
    Ok(Some((time, state)))
}

/// For each of `names`, its index in a message's `listed` names (each listed once).
fn joint_order(names: &[String], listed: &[String], time: f64) -> Result<Vec<usize>, String> {
    let mut index = HashMap::with_capacity(listed.len());
    for (k, name) in listed.iter().enumerate() {
        if index.insert(name.as_str(), k).is_some() {
            let name = armctl_control::shown(name);
            return Err(format!("joint '{name}' is listed twice at t = {time} s"));
        }
    }
    names
        .iter()
        .map(|n| {
            index.get(n.as_str()).copied().ok_or_else(|| {
                format!(
                    "joint '{}' is missing at t = {time} s",
                    armctl_control::shown(n)
                )
            })
        })
        .collect()
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
        let order = joint_order(&names, &state.name, time)?;
        let pick = |v: &[f64], what: &str| -> Result<Vec<f64>, String> {
            order
                .iter()
                .zip(&names)
                .map(|(&i, name)| {
                    let name = || armctl_control::shown(name);
                    match v.get(i) {
                        Some(x) if x.is_finite() => Ok(*x),
                        Some(x) => Err(format!("{what} {x} of joint '{}' at t = {time} s", name())),
                        None => Err(format!("no {what} for joint '{}' at t = {time} s", name())),
                    }
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
