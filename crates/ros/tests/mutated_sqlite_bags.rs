//! Property test: rosbag2 SQLite bags of joint states (a `.db3` with its `metadata.yaml`, as
//! `ros2 bag record` leaves them on Humble), mutated as bytes (the database truncated, bytes
//! flipped, ranges deleted or overwritten; the metadata's text edited), are read by
//! [`armctl_nodes::bag::read_joint_states`] as `armctl identify` reads them, as the directory and
//! as the file. No panic escapes, no allocation exceeds 256 MiB (the capped allocator below
//! refuses it, which aborts the test), every refusal is a short message, and an accepted log is
//! consistent and finite. The cases come from a fixed seed.

use std::path::{Path, PathBuf};

use armctl_nodes::bag::read_joint_states;
use byteorder::LittleEndian;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

mod common;

use common::{states, Capped};

#[global_allocator]
static ALLOCATOR: Capped = Capped;

const TOPIC: &str = "/joint_states";
/// Longest error message accepted (with the file's path).
const MAX_MESSAGE_CHARS: usize = 400;

const METADATA: &str = "rosbag2_bagfile_information:
  version: 5
  storage_identifier: sqlite3
  relative_file_paths:
    - bag_0.db3
  duration:
    nanoseconds: 19000000
  starting_time:
    nanoseconds_since_epoch: 3000000000
  message_count: 20
  topics_with_message_count:
    - topic_metadata:
        name: /joint_states
        type: sensor_msgs/msg/JointState
        serialization_format: cdr
        offered_qos_profiles: ''
      message_count: 20
  compression_format: ''
  compression_mode: ''
";

/// The bag's database, written with rosbag2's SQLite schema (CDR messages with their
/// encapsulation header, as rosbag2 stores them).
fn database() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("armctl-db3-{}.db3", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(
            "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
               serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
             CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
               timestamp INTEGER NOT NULL, data BLOB NOT NULL);
             INSERT INTO topics VALUES (1, '/joint_states', 'sensor_msgs/msg/JointState', 'cdr', '');",
        )
        .unwrap();
        for (k, state) in states().iter().enumerate() {
            let mut data = vec![0, 1, 0, 0];
            data.extend(cdr_encoding::to_vec::<_, LittleEndian>(state).unwrap());
            let time = 3_000_000_000i64 + k as i64 * 1_000_000;
            db.execute(
                "INSERT INTO messages(topic_id, timestamp, data) VALUES (1, ?1, ?2)",
                rusqlite::params![time, data],
            )
            .unwrap();
        }
        drop(db);
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        bytes
    })
}

/// A bag directory of this test's own.
fn bag_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("armctl-mutated-bag-{}-{tag}", std::process::id()))
}

fn write_bag(dir: &Path, database: &[u8], metadata: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("bag_0.db3"), database).unwrap();
    std::fs::write(dir.join("metadata.yaml"), metadata).unwrap();
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate { at: f64 },
    Flip { at: f64, xor: u8 },
    Delete { at: f64, len: usize },
    Overwrite { at: f64, len: usize, byte: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0).prop_map(|at| Mutation::Truncate { at }),
        (0.0..1.0, 1u8..=255).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        (0.0..1.0, 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0, 1usize..64, any::<u8>()).prop_map(|(at, len, byte)| Mutation::Overwrite {
            at,
            len,
            byte
        }),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    let index = |at: f64| ((len as f64 * at) as usize).min(len);
    match *mutation {
        Mutation::Truncate { at } => bytes.truncate(index(at)),
        Mutation::Flip { at, xor } => {
            if let Some(b) = bytes.get_mut(index(at)) {
                *b ^= xor;
            }
        }
        Mutation::Delete { at, len: n } => {
            let start = index(at);
            bytes.drain(start..(start + n).min(len));
        }
        Mutation::Overwrite { at, len: n, byte } => {
            let start = index(at);
            bytes[start..(start + n).min(len)].fill(byte);
        }
    }
}

fn check(
    result: Result<armctl_ident::JointLog, armctl_nodes::RosError>,
) -> Result<(), TestCaseError> {
    match result {
        Ok(log) => {
            prop_assert!(log.check().is_ok());
            for row in log.position.iter().chain(&log.effort) {
                prop_assert!(row.iter().all(|v| v.is_finite()), "{row:?}");
            }
            prop_assert!(log.time.iter().all(|t| t.is_finite()));
        }
        Err(e) => {
            let message = e.to_string();
            let chars = message.chars().count();
            let head: String = message.chars().take(500).collect();
            prop_assert!(
                chars > 0 && chars < MAX_MESSAGE_CHARS,
                "{chars} chars: {head}"
            );
        }
    }
    Ok(())
}

#[test]
fn the_unmutated_bag_is_read_as_the_directory_and_as_the_file() {
    let dir = bag_dir("unmutated");
    write_bag(&dir, database(), METADATA);
    for path in [dir.clone(), dir.join("bag_0.db3")] {
        let log = read_joint_states(&path, TOPIC).unwrap();
        assert_eq!(log.len(), 20);
        assert_eq!(log.joint_names, ["j1", "j2"]);
    }
    let _ = std::fs::remove_dir_all(dir);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        rng_seed: RngSeed::Fixed(0x5351_4c49_5445_4241),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_sqlite_bags_give_short_errors_never_panic_nor_allocate_without_bound(
        database_mutations in prop::collection::vec(mutation(), 0..3),
        metadata_mutations in prop::collection::vec(mutation(), 0..2),
    ) {
        let mut bytes = database().to_vec();
        for m in &database_mutations {
            mutate(&mut bytes, m);
        }
        let mut metadata = METADATA.as_bytes().to_vec();
        for m in &metadata_mutations {
            mutate(&mut metadata, m);
        }
        let dir = bag_dir("case");
        write_bag(&dir, &bytes, &String::from_utf8_lossy(&metadata));
        let as_directory = read_joint_states(&dir, TOPIC);
        let as_file = read_joint_states(&dir.join("bag_0.db3"), TOPIC);
        let _ = std::fs::remove_dir_all(&dir);
        check(as_directory)?;
        check(as_file)?;
    }
}
