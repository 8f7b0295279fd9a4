//! Property test: MCAP logs of joint states, mutated as bytes (truncated, bytes flipped, a
//! range deleted or duplicated, a record length or any 4- or 8-byte field overwritten with a
//! huge value; then, half the time, every uncompressed chunk compressed with zstd, so that a
//! bad record inside a compressed chunk is read too), are read by
//! [`armctl_nodes::bag::read_joint_states`] as `armctl identify` reads them. No panic escapes,
//! no allocation exceeds 256 MiB (the capped allocator below refuses it, which aborts the
//! test), every refusal is a short message, and an accepted log is consistent and finite.
//!
//! The logs: as armctl writes them (zstd chunks), with uncompressed chunks (as
//! `ros2 bag record` writes by default) and without chunks. The cases come from a fixed seed.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::PathBuf;

use armctl_nodes::bag::{read_joint_states, write_joint_states};
use armctl_nodes::msgs::JointState;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

mod common;

use common::{states, Capped};

#[global_allocator]
static ALLOCATOR: Capped = Capped;

/// Longest error message accepted (with the file's path).
const MAX_MESSAGE_CHARS: usize = 300;

const TOPIC: &str = "/joint_states";
const CHUNK: u8 = 0x06;
/// MCAP's magic, at both ends of a file.
const MAGIC: usize = 8;

/// A file of this test's own in the temporary directory.
fn scratch(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("armctl-mutated-{}-{tag}.mcap", std::process::id()))
}

/// The log as armctl writes it (zstd chunks).
fn armctl_log() -> Vec<u8> {
    let path = scratch("original");
    write_joint_states(&path, TOPIC, &states()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

/// The log written uncompressed, in chunks or not.
fn uncompressed_log(chunks: bool) -> Vec<u8> {
    let options = mcap::WriteOptions::new()
        .compression(None)
        .use_chunks(chunks);
    let mut writer = options.create(Cursor::new(Vec::new())).unwrap();
    let schema = writer
        .add_schema("sensor_msgs/msg/JointState", "ros2msg", b"string[] name")
        .unwrap();
    let channel = writer
        .add_channel(schema, TOPIC, "cdr", &BTreeMap::new())
        .unwrap();
    for (sequence, state) in states().iter().enumerate() {
        let mut data = vec![0, 1, 0, 0];
        data.extend(cdr_encoding::to_vec::<JointState, byteorder::LittleEndian>(state).unwrap());
        let time =
            (state.header.stamp.sec as u64) * 1_000_000_000 + state.header.stamp.nanosec as u64;
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: sequence as u32,
            log_time: time,
            publish_time: time,
        };
        writer.write_to_known_channel(&header, &data).unwrap();
    }
    writer.finish().unwrap();
    writer.into_inner().into_inner()
}

/// The logs mutated: as armctl writes them, with uncompressed chunks, without chunks
/// (written once: the tests run in parallel).
fn logs() -> &'static [Vec<u8>; 3] {
    static LOGS: std::sync::OnceLock<[Vec<u8>; 3]> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        [
            armctl_log(),
            uncompressed_log(true),
            uncompressed_log(false),
        ]
    })
}

/// A record: where it starts (its opcode), and its body.
struct Record {
    start: usize,
    opcode: u8,
    body: std::ops::Range<usize>,
}

/// The records between `from` and `to`, as far as their lengths allow.
fn records(bytes: &[u8], from: usize, to: usize) -> Vec<Record> {
    let mut found = vec![];
    let mut at = from;
    while at + 9 <= to {
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap());
        let body = at + 9;
        let Some(end) = usize::try_from(len).ok().and_then(|l| body.checked_add(l)) else {
            break;
        };
        if end > to {
            break;
        }
        found.push(Record {
            start: at,
            opcode: bytes[at],
            body: body..end,
        });
        at = end;
    }
    found
}

/// Of a chunk's body: its compression and where its records are.
fn chunk_records(
    bytes: &[u8],
    body: &std::ops::Range<usize>,
) -> Option<(String, std::ops::Range<usize>)> {
    let b = &bytes[body.clone()];
    let name_len = u32::from_le_bytes(b.get(28..32)?.try_into().ok()?) as usize;
    let name = String::from_utf8(b.get(32..32usize.checked_add(name_len)?)?.to_vec()).ok()?;
    let records = body.start + 40 + name_len;
    (records <= body.end).then_some((name, records..body.end))
}

/// Where the length field of every record is: of the file, and inside uncompressed chunks.
fn length_fields(bytes: &[u8]) -> Vec<usize> {
    let mut fields = vec![];
    for record in records(bytes, MAGIC.min(bytes.len()), bytes.len()) {
        fields.push(record.start + 1);
        if record.opcode == CHUNK {
            if let Some((name, inner)) = chunk_records(bytes, &record.body) {
                if name.is_empty() {
                    let nested = records(bytes, inner.start, inner.end);
                    fields.extend(nested.iter().map(|r| r.start + 1));
                }
            }
        }
    }
    fields
}

/// The file with every uncompressed chunk compressed with zstd (CRC 0: not checked).
fn compressed(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes[..MAGIC.min(bytes.len())].to_vec();
    let mut copied = out.len();
    for record in records(bytes, out.len(), bytes.len()) {
        let chunk = (record.opcode == CHUNK)
            .then(|| chunk_records(bytes, &record.body))
            .flatten()
            .filter(|(name, _)| name.is_empty());
        let Some((_, inner)) = chunk else { continue };
        out.extend_from_slice(&bytes[copied..record.start]);
        let data = zstd::encode_all(&bytes[inner.clone()], 0).unwrap();
        let mut body = bytes[record.body.start..record.body.start + 16].to_vec();
        body.extend((inner.len() as u64).to_le_bytes());
        body.extend(0u32.to_le_bytes());
        body.extend(4u32.to_le_bytes());
        body.extend(b"zstd");
        body.extend((data.len() as u64).to_le_bytes());
        body.extend(data);
        out.push(CHUNK);
        out.extend((body.len() as u64).to_le_bytes());
        out.extend(body);
        copied = record.body.end;
    }
    out.extend_from_slice(&bytes[copied..]);
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate { at: f64 },
    Flip { at: f64, xor: u8 },
    Delete { at: f64, len: usize },
    Duplicate { at: f64, len: usize },
    RecordLength { record: f64, value: u64 },
    Field { at: f64, value: u64, width: usize },
}

fn huge() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![
        u64::MAX,
        1 << 63,
        1 << 40,
        1 << 33,
        1 << 32,
        u32::MAX as u64,
        1 << 31,
        1 << 28,
        0,
    ])
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (0.0..1.0).prop_map(|at| Mutation::Truncate { at }),
        1 => (0.0..1.0, 1u8..=255).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        1 => (0.0..1.0, 1usize..100).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (0.0..1.0, 1usize..200).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        2 => (0.0..1.0, huge()).prop_map(|(record, value)| Mutation::RecordLength { record, value }),
        2 => (0.0..1.0, huge(), prop::sample::select(vec![4usize, 8]))
            .prop_map(|(at, value, width)| Mutation::Field { at, value, width }),
    ]
}

fn index(len: usize, at: f64) -> usize {
    ((len as f64 * at) as usize).min(len)
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    match *mutation {
        Mutation::Truncate { at } => bytes.truncate(index(len, at)),
        Mutation::Flip { at, xor } => {
            if let Some(b) = bytes.get_mut(index(len, at)) {
                *b ^= xor;
            }
        }
        Mutation::Delete { at, len: n } | Mutation::Duplicate { at, len: n } => {
            let start = index(len, at);
            let end = (start + n).min(len);
            let range: Vec<u8> = bytes.drain(start..end).collect();
            if matches!(mutation, Mutation::Duplicate { .. }) {
                bytes.splice(start..start, range.iter().chain(&range).copied());
            }
        }
        Mutation::RecordLength { record, value } => {
            let fields = length_fields(bytes);
            if let Some(&at) = fields.get(index(fields.len(), record).min(fields.len().max(1) - 1))
            {
                bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
        }
        Mutation::Field { at, value, width } => {
            let start = index(len.saturating_sub(width), at);
            if start + width <= len {
                bytes[start..start + width].copy_from_slice(&value.to_le_bytes()[..width]);
            }
        }
    }
}

fn check_message(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(!message.is_empty());
    let chars = message.chars().count();
    let head: String = message.chars().take(400).collect();
    prop_assert!(chars < MAX_MESSAGE_CHARS, "{chars} chars: {head}");
    Ok(())
}

/// An accepted log: its checks hold, names are distinct, values and times finite.
fn check_accepted(log: &armctl_ident::JointLog) -> Result<(), TestCaseError> {
    prop_assert!(log.check().is_ok());
    let names = &log.joint_names;
    prop_assert!(!names.is_empty());
    for (k, name) in names.iter().enumerate() {
        prop_assert!(!names[..k].contains(name), "'{name}' twice");
    }
    let rows = [
        Some(&log.position),
        log.velocity.as_ref(),
        Some(&log.effort),
    ];
    for row in rows.into_iter().flatten().flatten() {
        prop_assert!(row.iter().all(|v| v.is_finite()), "{row:?}");
    }
    prop_assert!(log.time.iter().all(|t| t.is_finite()));
    Ok(())
}

fn read(bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = scratch("case");
    std::fs::write(&path, bytes).unwrap();
    match read_joint_states(&path, TOPIC) {
        Ok(log) => check_accepted(&log),
        Err(e) => check_message(&e.to_string()),
    }
}

#[test]
fn the_unmutated_logs_are_read() {
    let [armctl, chunks, no_chunks] = logs();
    for bytes in [armctl, &compressed(chunks), chunks, no_chunks] {
        let path = scratch("unmutated");
        std::fs::write(&path, bytes).unwrap();
        let log = read_joint_states(&path, TOPIC).unwrap();
        assert_eq!(log.len(), 20);
        assert_eq!(log.joint_names, ["j1", "j2"]);
        let _ = std::fs::remove_file(&path);
    }
}

/// Before records were bounded, mcap sized its buffer by this length: the process aborted.
#[test]
fn a_record_claiming_a_terabyte_in_a_compressed_chunk_is_refused_unallocated() {
    let mut bytes = logs()[1].clone();
    let chunk = records(&bytes, MAGIC, bytes.len())
        .into_iter()
        .find(|r| r.opcode == CHUNK)
        .unwrap();
    let (_, inner) = chunk_records(&bytes, &chunk.body).unwrap();
    bytes[inner.start + 1..inner.start + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let path = scratch("terabyte");
    std::fs::write(&path, compressed(&bytes)).unwrap();
    let e = read_joint_states(&path, TOPIC).unwrap_err().to_string();
    let _ = std::fs::remove_file(&path);
    assert!(e.contains("length exceeds limit"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        rng_seed: RngSeed::Fixed(0x4d43_4150_4d55_5441),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_mcap_logs_give_short_errors_never_panic_nor_allocate_without_bound(
        file in 0usize..3,
        mutations in prop::collection::vec(mutation(), 1..4),
        compress in any::<bool>(),
    ) {
        let mut bytes = logs()[file].clone();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        if compress {
            bytes = compressed(&bytes);
        }
        let result = read(&bytes);
        let _ = std::fs::remove_file(scratch("case"));
        result?;
    }
}
