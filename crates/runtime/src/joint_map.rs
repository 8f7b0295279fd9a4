//! Maps the joints of a `/joint_states` message to the controller's joint order by name
//! (ros2_control publishes its own order; extra joints such as gripper fingers are ignored).
//! The index table is rebuilt only when the message's names change. A fault names the joint
//! with a shared string, so reporting one allocates nothing (the C ABI's update path).

use std::sync::Arc;

/// Name-to-index mapping for one message layout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointMap {
    joints: Vec<String>,
    /// The same names, shared into faults.
    shared: Vec<Arc<str>>,
    layout: Vec<String>,
    /// For each controlled joint, its index in the message, if present.
    index: Vec<Option<usize>>,
    /// A name the current layout lists twice.
    duplicate: Option<String>,
}

/// What a message lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum MapFault {
    /// A controlled joint is not in the message.
    Missing(Arc<str>),
    /// A controlled joint's position or velocity is missing or not finite.
    NonFinite(Arc<str>),
    /// The message lists a joint name twice: which entry is meant cannot be known.
    Duplicate(String),
    /// The arrays do not fit the names (more positions or velocities than names).
    Malformed(String),
}

impl JointMap {
    /// For the controlled `joints`, in order.
    pub fn new(joints: Vec<String>) -> Self {
        let n = joints.len();
        Self {
            shared: joints.iter().map(|j| Arc::from(j.as_str())).collect(),
            joints,
            layout: Vec::new(),
            index: vec![None; n],
            duplicate: None,
        }
    }

    /// The controlled joints.
    pub fn joints(&self) -> &[String] {
        &self.joints
    }

    /// Controlled joint `k`'s name, shared (allocates nothing).
    pub fn shared_name(&self, k: usize) -> Arc<str> {
        self.shared[k].clone()
    }

    /// Copies positions and velocities of the controlled joints into `q`, `qd`; on a fault
    /// (a joint missing or not finite, a name listed twice, more values than names) nothing is
    /// written.
    pub fn extract(
        &mut self,
        names: &[String],
        position: &[f64],
        velocity: &[f64],
        q: &mut [f64],
        qd: &mut [f64],
    ) -> Result<(), MapFault> {
        if self.layout.as_slice() != names {
            self.layout.clear();
            self.layout.extend(names.iter().cloned());
            for (slot, joint) in self.index.iter_mut().zip(&self.joints) {
                *slot = names.iter().position(|n| n == joint);
            }
            self.duplicate = names
                .iter()
                .enumerate()
                .find(|(k, n)| names[..*k].contains(n))
                .map(|(_, n)| n.clone());
        }
        if let Some(name) = &self.duplicate {
            return Err(MapFault::Duplicate(name.clone()));
        }
        if position.len() > names.len() || velocity.len() > names.len() {
            return Err(MapFault::Malformed(format!(
                "{} positions and {} velocities for {} names",
                position.len(),
                velocity.len(),
                names.len()
            )));
        }
        // Check every joint before writing any: a faulty message leaves q and qd untouched.
        for (k, slot) in self.index.iter().enumerate() {
            let i = slot.ok_or_else(|| MapFault::Missing(self.shared[k].clone()))?;
            match (position.get(i), velocity.get(i)) {
                (Some(p), Some(v)) if p.is_finite() && v.is_finite() => {}
                _ => return Err(MapFault::NonFinite(self.shared[k].clone())),
            }
        }
        for (k, i) in self.index.iter().flatten().enumerate() {
            q[k] = position[*i];
            qd[k] = velocity[*i];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn maps_by_name_ignores_extras_and_names_faults() {
        let mut map = JointMap::new(names(&["a", "b"]));
        let (mut q, mut qd) = ([0.0; 2], [0.0; 2]);
        map.extract(
            &names(&["finger", "b", "a"]),
            &[9.0, 2.0, 1.0],
            &[9.0, 20.0, 10.0],
            &mut q,
            &mut qd,
        )
        .unwrap();
        assert_eq!((q, qd), ([1.0, 2.0], [10.0, 20.0]));
        assert_eq!(
            map.extract(&names(&["a"]), &[1.0], &[0.0], &mut q, &mut qd),
            Err(MapFault::Missing("b".into()))
        );
        assert_eq!(
            map.extract(
                &names(&["a", "b"]),
                &[1.0, f64::NAN],
                &[0.0, 0.0],
                &mut q,
                &mut qd
            ),
            Err(MapFault::NonFinite("b".into()))
        );
        assert_eq!(
            map.extract(&names(&["a", "b"]), &[1.0, 2.0], &[0.0], &mut q, &mut qd),
            Err(MapFault::NonFinite("b".into()))
        );
    }

    #[test]
    fn a_faulty_message_leaves_the_last_valid_state_untouched() {
        let mut map = JointMap::new(names(&["a", "b"]));
        let (mut q, mut qd) = ([1.0, 2.0], [3.0, 4.0]);
        let joints = names(&["a", "b"]);
        let fault = map.extract(&joints, &[5.0, f64::NAN], &[6.0, 0.0], &mut q, &mut qd);
        assert_eq!(fault, Err(MapFault::NonFinite("b".into())));
        assert_eq!((q, qd), ([1.0, 2.0], [3.0, 4.0]), "no mix of new and old");
        let missing = map.extract(&names(&["a"]), &[5.0], &[6.0], &mut q, &mut qd);
        assert_eq!(missing, Err(MapFault::Missing("b".into())));
        assert_eq!((q, qd), ([1.0, 2.0], [3.0, 4.0]));
    }

    #[test]
    fn duplicate_names_and_extra_values_are_refused_not_resolved() {
        let mut map = JointMap::new(names(&["a", "b"]));
        let (mut q, mut qd) = ([0.0; 2], [0.0; 2]);
        let twice = names(&["a", "b", "a"]);
        let fault = map.extract(&twice, &[1.0, 2.0, 3.0], &[0.0; 3], &mut q, &mut qd);
        assert_eq!(fault, Err(MapFault::Duplicate("a".into())));
        let fault = map.extract(
            &names(&["a", "b"]),
            &[1.0, 2.0, 3.0],
            &[0.0; 2],
            &mut q,
            &mut qd,
        );
        assert!(matches!(fault, Err(MapFault::Malformed(m)) if m.contains("3 positions")));
        assert_eq!((q, qd), ([0.0; 2], [0.0; 2]));
    }
}
