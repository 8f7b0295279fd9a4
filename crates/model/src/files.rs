//! Reading input files with bounds: only regular files (a FIFO would block forever, a device
//! such as `/dev/zero` never ends), and no more than a stated size, so no input file can
//! exhaust memory or hang a program. Every reader of user files in armctl goes through here.

use std::io::Read;
use std::path::Path;

/// Largest URDF, bytes.
pub const MAX_URDF_BYTES: u64 = 64 << 20;
/// Largest parameter, settings or trajectory file, bytes.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;
/// Largest joint log (CSV or MCAP), bytes.
pub const MAX_LOG_BYTES: u64 = 2 << 30;

/// Checks that `path` is a regular file of at most `limit` bytes; the reason says what it is.
pub fn check_regular_file(path: &Path, limit: u64) -> Result<(), String> {
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_file() {
        return Err("not a regular file (a directory, device or pipe is not read)".into());
    }
    if metadata.len() > limit {
        return Err(format!(
            "{} bytes is larger than the {limit} bytes accepted",
            metadata.len()
        ));
    }
    Ok(())
}

/// The bytes of the regular file `path`, at most `limit` of them (checked before and while
/// reading, in case the file grows).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    check_regular_file(path, limit)?;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than the {limit} bytes accepted"));
    }
    Ok(bytes)
}

/// The UTF-8 text of the regular file `path`, at most `limit` bytes.
pub fn read_text_bounded(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_bounded(path, limit)?).map_err(|_| "not UTF-8 text".to_string())
}

/// Most characters of a parser's message about an input file.
const MAX_MESSAGE_CHARS: usize = 200;

/// A parser's message (serde's, for instance) cut in the middle when long: a value it quotes
/// from a 16 MiB file is not echoed whole, and the end, which says where it was ("at line 12
/// column 7"), is kept.
pub fn short_message(message: &str) -> String {
    let chars = message.chars().count();
    if chars <= MAX_MESSAGE_CHARS {
        return message.to_string();
    }
    let head: String = message.chars().take(120).collect();
    let tail: String = message.chars().skip(chars - 60).collect();
    format!("{head} ... {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_pipes_directories_and_oversized_files_are_refused() {
        let e = read_text_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_text_bounded(Path::new("/"), 1 << 20).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let dir = std::env::temp_dir().join(format!("armctl-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.txt");
        std::fs::write(&big, vec![b'a'; 2000]).unwrap();
        let e = read_text_bounded(&big, 1000).unwrap_err();
        assert!(e.contains("2000 bytes is larger than the 1000"), "{e}");
        assert_eq!(read_text_bounded(&big, 2000).unwrap().len(), 2000);
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_text_bounded(&fifo, 1000).unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
