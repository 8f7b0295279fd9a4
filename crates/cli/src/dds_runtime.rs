//! The tokio runtime the commands that talk DDS run their transport on (its spinner and
//! readers are tasks of it): two worker threads, timers and I/O.

/// A runtime for a DDS transport.
pub(crate) fn dds_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}
