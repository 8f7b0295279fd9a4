//! Errors about a URDF placed in its text: the element at fault and the line it starts on.
//! Only failing files are scanned (twice the parsing work, once), except for the cheap search
//! for xacro markers that every file gets.

use crate::error::clipped;
use crate::urdf_scan::{first_too_deep, scan, Scan, TopElement};
use crate::ModelError;

/// The children of `<robot>` that urdf-rs deserialises; it skips the others (`<gazebo>`, ...).
const DESERIALISED: [&str; 3] = ["link", "joint", "material"];

/// A root start tag longer than this is not copied around each element tried alone (that
/// would cost its length once per element); a plain `<robot>` tag stands in for it.
const MAX_WRAPPER_BYTES: usize = 4096;

/// Deepest element nesting accepted (a URDF needs 5: robot, link, visual, geometry, mesh).
/// The XML parser behind urdf-rs recurses once per level, so a document nested 100 000 deep
/// would overflow the stack and abort the program instead of being refused.
pub const MAX_XML_DEPTH: usize = 100;

/// Refuses XML nested deeper than [`MAX_XML_DEPTH`], at the line of the first element too deep.
pub(crate) fn refuse_deep_nesting(text: &str) -> Result<(), ModelError> {
    match first_too_deep(text, MAX_XML_DEPTH) {
        None => Ok(()),
        Some(at) => {
            let line = 1 + text.as_bytes()[..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            let reason = format!(
                "elements are nested more than {MAX_XML_DEPTH} deep (a URDF needs about 5)"
            );
            Err(malformed(line, "the document".into(), &reason))
        }
    }
}

/// Refuses a file still holding xacro expressions (`${...}`, `$(...)`), naming the element and
/// line. Files without the two markers are not scanned.
pub(crate) fn refuse_xacro(text: &str) -> Result<(), ModelError> {
    if text.contains("${") || text.contains("$(") {
        scan(text)?;
    }
    Ok(())
}

/// The deserialiser's error placed: badly formed XML at its line, else the first link, joint or
/// material that urdf-rs refuses on its own, else the root element.
pub(crate) fn deserializer_error(text: &str, error: &urdf_rs::UrdfError) -> ModelError {
    let scan = match scan(text) {
        Ok(scan) => scan,
        Err(xml) => return xml,
    };
    if scan.root_kind != "robot" {
        let reason = format!(
            "the root element is <{}>, not <robot>",
            clipped(&scan.root_kind)
        );
        return malformed(scan.root_line, "the document".into(), &reason);
    }
    let message = error.to_string();
    if let Some(line) = xml_parser_line(&message) {
        return malformed(line, element_at_line(&scan, line), &message);
    }
    match first_refused_element(text, &scan) {
        Some((element, reason)) => malformed(element.line, element.describe(), &reason),
        None => malformed(scan.root_line, "<robot>".into(), &message),
    }
}

/// The line in a message of urdf-rs's XML parser (RustyXML), which is stricter than the scan
/// in places (`--` in a comment): "Parse error; Line: 51, Column: 9, Reason: ...".
fn xml_parser_line(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("Parse error; Line: ")?;
    rest.split(',').next()?.parse().ok()
}

/// How errors name the child of `<robot>` that holds `line`, or `<robot>` itself.
fn element_at_line(scan: &Scan, line: usize) -> String {
    match scan.elements.iter().rev().find(|e| e.line <= line) {
        Some(element) => element.describe(),
        None => "<robot>".into(),
    }
}

/// The first element urdf-rs refuses when it is the only child of the file's `<robot>`, and
/// urdf-rs's message. Each element is parsed once: linear in the size of the file.
fn first_refused_element<'s>(text: &str, scan: &'s Scan) -> Option<(&'s TopElement, String)> {
    let root_tag = match text.get(scan.root_tag.clone()) {
        Some(tag) if tag.len() <= MAX_WRAPPER_BYTES && !tag.ends_with("/>") => tag,
        _ => "<robot name=\"robot\">",
    };
    scan.elements
        .iter()
        .filter(|element| DESERIALISED.contains(&element.kind.as_str()))
        .find_map(|element| {
            let alone = format!("{root_tag}{}</robot>", text.get(element.range.clone())?);
            let error = urdf_rs::read_from_string(&alone).err()?;
            Some((element, error.to_string()))
        })
}

fn malformed(line: usize, element: String, reason: &str) -> ModelError {
    // serde-xml-rs prefixes every message of a serde `Deserialize` impl with this; it says nothing.
    let reason = reason.strip_prefix("custom: ").unwrap_or(reason);
    ModelError::Malformed {
        element,
        reason: clipped(reason),
    }
    .at_line(line)
}

/// `error` with the line of the element it names, when it names one the text has.
pub(crate) fn with_line(text: &str, error: ModelError) -> ModelError {
    let Some((kind, name, occurrence)) = named_element(&error) else {
        return error;
    };
    let Ok(scan) = scan(text) else {
        return error;
    };
    let line = scan
        .elements
        .iter()
        .filter(|e| e.kind == kind && e.name.as_deref() == Some(name))
        .nth(occurrence)
        .map(|e| e.line);
    match line {
        Some(line) => error.at_line(line),
        None => error,
    }
}

/// The element an error of armctl's own checks is about: kind, name, and which occurrence of
/// that name (a duplicate is the second).
fn named_element(error: &ModelError) -> Option<(&str, &str, usize)> {
    use ModelError as E;
    match error {
        E::DuplicateName { kind, name } => Some((kind, name, 1)),
        E::MissingLink { joint, .. }
        | E::ZeroAxis { joint }
        | E::UnsupportedJoint { joint, .. }
        | E::MimicOnChain { joint, .. }
        | E::InvalidLimit { joint, .. } => Some(("joint", joint, 0)),
        E::NegativeMass { link, .. } | E::InertiaNotPositive { link, .. } => {
            Some(("link", link, 0))
        }
        E::NonFinite { element, .. } | E::NameTooLong { element, .. } => {
            quoted_element(element).map(|(k, n)| (k, n, 0))
        }
        _ => None,
    }
}

/// Kind and name from "link 'upper_arm' inertial" or "joint 'elbow'".
fn quoted_element(element: &str) -> Option<(&str, &str)> {
    let (kind, rest) = element.split_once(" '")?;
    let (name, _) = rest.rsplit_once('\'')?;
    Some((kind, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_parser_lines_are_read() {
        let message = "Parse error; Line: 51, Column: 9, Reason: No more than one adjacent '-'";
        assert_eq!(xml_parser_line(message), Some(51));
        assert_eq!(xml_parser_line("missing field `name`"), None);
    }

    #[test]
    fn quoted_elements_are_split() {
        assert_eq!(
            quoted_element("link 'upper arm' inertial"),
            Some(("link", "upper arm"))
        );
        assert_eq!(quoted_element("joint 'elbow'"), Some(("joint", "elbow")));
        assert_eq!(quoted_element("joint"), None);
    }

    #[test]
    fn a_duplicate_is_placed_at_its_second_occurrence() {
        let text = "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"a\"/>\n</robot>";
        let error = ModelError::DuplicateName {
            kind: "link",
            name: "a".into(),
        };
        assert_eq!(with_line(text, error).line(), Some(3));
    }
}
