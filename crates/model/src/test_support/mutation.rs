//! The harness of the property tests that mutate a bundled file (a URDF, a parameter file, a
//! trajectory file, a joint log) and check that what reads it never panics and refuses in a
//! short message: the mutations, where a file type keeps its values, and the message check.
//! Each test brings its own garbage values and its own check of what was read.

use proptest::prelude::*;

/// One change to a text; positions are fractions of its length (or of its values), so one
/// mutation fits any file.
#[derive(Debug, Clone)]
#[allow(missing_docs)] // each variant's line names its fields
pub enum Mutation {
    /// Up to `len` bytes from the fraction `at` removed.
    Delete { at: f64, len: usize },
    /// Up to `len` bytes from the fraction `at` written twice.
    Duplicate { at: f64, len: usize },
    /// The value at the fraction `slot` of the values replaced by `value`.
    Garbage { slot: f64, value: String },
    /// The number at the fraction `slot` of the values multiplied by `factor` (a value that is
    /// not a number stays): the file stays readable, the limits are tested.
    Scale { slot: f64, factor: f64 },
}

/// Where a file type keeps its values: each starts after one of `after` (or at the start of
/// the text) and ends before one of `before`.
#[derive(Debug, Clone, Copy)]
pub struct ValueSlots {
    /// What a value follows.
    pub after: &'static [&'static str],
    /// Whether the text's first character starts a value too.
    pub at_start: bool,
    /// What ends a value.
    pub before: &'static [char],
}

/// A YAML mapping's values, one per line (a parameter file).
pub const YAML_VALUES: ValueSlots = ValueSlots {
    after: &[": "],
    at_start: false,
    before: &['\n'],
};

/// YAML values in mappings, flow lists and block lists (a trajectory file).
pub const YAML_ITEMS: ValueSlots = ValueSlots {
    after: &[": ", "[", ", ", "- "],
    at_start: false,
    before: &[',', ']', '}', '\n'],
};

/// The cells of a CSV file.
pub const CSV_CELLS: ValueSlots = ValueSlots {
    after: &[","],
    at_start: true,
    before: &[',', '\n'],
};

/// XML attribute values (a URDF).
pub const XML_ATTRIBUTES: ValueSlots = ValueSlots {
    after: &["=\""],
    at_start: false,
    before: &['"'],
};

/// Deletions of 1 to `delete` bytes, duplications of 1 to `duplicate` bytes and `garbage`
/// values, equally likely.
pub fn mutation(
    garbage: impl Strategy<Value = String>,
    delete: usize,
    duplicate: usize,
) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0, 1usize..delete).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0, 1usize..duplicate).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (0.0..1.0, garbage).prop_map(|(slot, value)| Mutation::Garbage { slot, value }),
    ]
}

/// As [`mutation`] (200 and 400 bytes), and numbers scaled by one of `factors`; scaled values
/// and garbage weigh 3 and 2 against 1 for each cut.
pub fn mutation_with_scaling(
    garbage: impl Strategy<Value = String>,
    factors: Vec<f64>,
) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (0.0..1.0, 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (0.0..1.0, 1usize..400).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        2 => (0.0..1.0, garbage).prop_map(|(slot, value)| Mutation::Garbage { slot, value }),
        3 => (0.0..1.0, prop::sample::select(factors))
            .prop_map(|(slot, factor)| Mutation::Scale { slot, factor }),
    ]
}

/// The character boundary at or before the fraction `at` of the text.
fn boundary(text: &str, at: f64) -> usize {
    let mut i = ((text.len() as f64 * at) as usize).min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `start..start + len` from the fraction `at`, shrunk to the text and to character boundaries.
fn span(text: &str, at: f64, len: usize) -> std::ops::Range<usize> {
    let start = boundary(text, at);
    let end_fraction = (start + len) as f64 / text.len().max(1) as f64;
    start..boundary(text, end_fraction.min(1.0)).max(start)
}

/// The value at the fraction `slot` of the text's values, as a range (none without values).
fn value_span(text: &str, slot: f64, slots: &ValueSlots) -> Option<std::ops::Range<usize>> {
    let mut starts: Vec<usize> = slots
        .after
        .iter()
        .flat_map(|p| text.match_indices(p).map(|(i, m)| i + m.len()))
        .collect();
    if slots.at_start {
        starts.push(0);
    }
    starts.sort_unstable();
    let last = starts.len().checked_sub(1)?;
    let start = starts[((starts.len() as f64 * slot) as usize).min(last)];
    let end = text[start..]
        .find(slots.before)
        .map_or(text.len(), |e| start + e);
    Some(start..end)
}

/// Applies `mutation` to `text`, whose values sit as `slots` says.
pub fn mutate(text: &mut String, mutation: &Mutation, slots: &ValueSlots) {
    match mutation {
        Mutation::Delete { at, len } => {
            let cut = span(text, *at, *len);
            text.replace_range(cut, "");
        }
        Mutation::Duplicate { at, len } => {
            let copied = span(text, *at, *len);
            let copy = text[copied.clone()].to_string();
            text.insert_str(copied.end, &copy);
        }
        Mutation::Garbage { slot, value } => {
            if let Some(value_at) = value_span(text, *slot, slots) {
                text.replace_range(value_at, value);
            }
        }
        Mutation::Scale { slot, factor } => {
            if let Some(value_at) = value_span(text, *slot, slots) {
                if let Ok(v) = text[value_at.clone()].trim().parse::<f64>() {
                    text.replace_range(value_at, &format!("{:?}", v * factor));
                }
            }
        }
    }
}

/// A refusal is a sentence or two whatever the input: not empty, under `max_chars`
/// characters (a huge value is not echoed whole).
pub fn check_message(message: &str, max_chars: usize) -> Result<(), TestCaseError> {
    prop_assert!(!message.is_empty());
    let chars = message.chars().count();
    let head: String = message.chars().take(400).collect();
    prop_assert!(chars < max_chars, "{chars} chars: {head}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mutation_changes_the_text_as_it_says() {
        let yaml = "a: 1\nb: 2.5\n";
        let mut text = yaml.to_string();
        mutate(
            &mut text,
            &Mutation::Delete { at: 0.0, len: 5 },
            &YAML_VALUES,
        );
        assert_eq!(text, "b: 2.5\n");
        let mut text = yaml.to_string();
        mutate(
            &mut text,
            &Mutation::Duplicate { at: 0.0, len: 5 },
            &YAML_VALUES,
        );
        assert_eq!(text, "a: 1\na: 1\nb: 2.5\n");
        let mut text = yaml.to_string();
        let garbage = Mutation::Garbage {
            slot: 0.9,
            value: "nan".into(),
        };
        mutate(&mut text, &garbage, &YAML_VALUES);
        assert_eq!(text, "a: 1\nb: nan\n");
        let mut text = yaml.to_string();
        let scale = Mutation::Scale {
            slot: 0.9,
            factor: 2.0,
        };
        mutate(&mut text, &scale, &YAML_VALUES);
        assert_eq!(text, "a: 1\nb: 5.0\n");
        let mut csv = "t,q\n0,1\n".to_string();
        let first = Mutation::Garbage {
            slot: 0.0,
            value: "x".into(),
        };
        mutate(&mut csv, &first, &CSV_CELLS);
        assert_eq!(csv, "x,q\n0,1\n");
        let mut xml = r#"<link name="a" mass="2"/>"#.to_string();
        let attribute = Mutation::Garbage {
            slot: 0.9,
            value: "-1".into(),
        };
        mutate(&mut xml, &attribute, &XML_ATTRIBUTES);
        assert_eq!(xml, r#"<link name="a" mass="-1"/>"#);
        assert!(check_message("", 10).is_err());
        assert!(check_message("0123456789", 10).is_err());
        assert!(check_message("short", 10).is_ok());
    }
}
