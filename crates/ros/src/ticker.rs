//! A periodic tick with sub-millisecond precision for node timers. tokio's timer works in
//! whole milliseconds, so a 1 kHz interval would fire anywhere within a 2 ms window; a thread
//! sleeping to absolute deadlines keeps ticks within tens of microseconds. Missed ticks
//! coalesce (one pending tick at most) and the schedule skips ahead instead of bursting.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::RosError;

/// The receiving end; the thread ends when this is dropped.
#[derive(Debug)]
pub struct Ticker {
    notify: Arc<Notify>,
}

impl Ticker {
    /// Ticks every `period`, the first one `period` from now.
    pub fn new(period: Duration) -> Result<Self, RosError> {
        let notify = Arc::new(Notify::new());
        let weak = Arc::downgrade(&notify);
        std::thread::Builder::new()
            .name("armctl-ticker".into())
            .spawn(move || {
                let mut deadline = Instant::now() + period;
                loop {
                    if let Some(wait) = deadline.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    let Some(notify) = weak.upgrade() else { return };
                    notify.notify_one();
                    deadline += period;
                    let now = Instant::now();
                    if deadline < now {
                        // Fell more than a period behind: skip ahead rather than burst.
                        deadline = now + period;
                    }
                }
            })
            .map(|_| Self { notify })
            .map_err(|e| RosError::Transport {
                reason: format!("starting the timer thread: {e}"),
            })
    }

    /// The next tick of `ticker`; never without one (a node with no timer).
    pub async fn next_tick(ticker: &Option<Ticker>) {
        match ticker {
            Some(t) => t.tick().await,
            None => std::future::pending().await,
        }
    }

    /// Waits for the next tick.
    pub async fn tick(&self) {
        self.notify.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_arrive_and_the_thread_ends_with_the_ticker() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ticker = Ticker::new(Duration::from_micros(500)).unwrap();
            for _ in 0..10 {
                ticker.tick().await;
            }
            let weak = Arc::downgrade(&ticker.notify);
            drop(ticker);
            // The thread holds a strong reference only while it notifies, for a moment.
            let released = (0..200).any(|_| {
                std::thread::sleep(Duration::from_millis(1));
                weak.upgrade().is_none()
            });
            assert!(released, "the thread holds only a weak reference");
        });
    }
}
