//! Requests a backend holds until the node answers them (a service's reply goes back on the
//! request it answers), numbered for the node.

use std::collections::HashMap;

/// Requests waiting for the node's answer, each under a number of its own. At most
/// `capacity` wait: beyond, the oldest is forgotten (unanswered), so a client that floods a
/// service cannot grow the table without bound, while a get_result waiting for a long goal
/// survives any number of requests answered meanwhile.
#[derive(Debug)]
pub(crate) struct PendingRequests<P> {
    waiting: HashMap<u64, P>,
    last_id: u64,
    capacity: usize,
}

impl<P> PendingRequests<P> {
    /// None waiting, at most `capacity` (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            waiting: HashMap::new(),
            last_id: 0,
            capacity: capacity.max(1),
        }
    }

    /// Keeps `request` and gives its number.
    pub(crate) fn number(&mut self, request: P) -> u64 {
        self.last_id += 1;
        if self.waiting.len() >= self.capacity {
            if let Some(oldest) = self.waiting.keys().min().copied() {
                self.waiting.remove(&oldest);
            }
        }
        self.waiting.insert(self.last_id, request);
        self.last_id
    }

    /// The request numbered `id`, if it still waits.
    pub(crate) fn take(&mut self, id: u64) -> Option<P> {
        self.waiting.remove(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_the_capacity_the_oldest_is_forgotten_and_the_rest_answered() {
        let mut pending = PendingRequests::new(3);
        let ids: Vec<u64> = ["a", "b", "c", "d"].map(|r| pending.number(r)).to_vec();
        assert_eq!(pending.take(ids[0]), None, "the oldest is forgotten");
        assert_eq!(pending.take(ids[3]), Some("d"));
        assert_eq!(pending.take(ids[1]), Some("b"));
        assert_eq!(pending.take(ids[1]), None, "answered once");
    }
}
