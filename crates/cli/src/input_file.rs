//! Reading the files a user names, with the bounds of `armctl_model::files` (regular files
//! only, a size limit) and an error that says which file and what it was for.

use std::path::Path;

use anyhow::{anyhow, Result};

/// The text of `path`, read as `what` ("parameters", "trajectory", ...), at most `limit` bytes.
pub(crate) fn read_text(path: &Path, what: &str, limit: u64) -> Result<String> {
    armctl_model::files::read_text_bounded(path, limit)
        .map_err(|reason| anyhow!("reading {what} {}: {reason}", path.display()))
}
