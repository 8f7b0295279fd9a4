//! One pass over the URDF text with a streaming XML reader, recording where each child of
//! `<robot>` starts. urdf-rs re-serialises the document before deserialising it, so its errors
//! carry no position; this scan is what places them. It also refuses unexpanded xacro.
//!
//! The cost is linear in the text: lines are counted incrementally, and only the children of
//! `<robot>` are recorded.

use std::ops::Range;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::error::clipped;
use crate::ModelError;

/// A child element of the root, such as a `<link>` or `<joint>`.
#[derive(Debug, Clone)]
pub(crate) struct TopElement {
    /// Tag name: "link", "joint", "material", "gazebo", ...
    pub(crate) kind: String,
    /// Its `name` attribute.
    pub(crate) name: Option<String>,
    /// Bytes from the `<` of its start tag to the `>` of its end tag.
    pub(crate) range: Range<usize>,
    /// 1-based line of its start tag.
    pub(crate) line: usize,
}

impl TopElement {
    /// How errors name it: "joint 'elbow'", or "<gazebo>" when it has no name.
    pub(crate) fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("{} '{}'", clipped(&self.kind), clipped(name)),
            None => format!("<{}>", clipped(&self.kind)),
        }
    }
}

/// Where the parts of a well-formed document are.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan {
    /// Tag name of the root element ("robot" in a URDF).
    pub(crate) root_kind: String,
    /// The root's start tag, to wrap single elements in (it carries the version and namespaces).
    pub(crate) root_tag: Range<usize>,
    /// 1-based line of the root's start tag.
    pub(crate) root_line: usize,
    /// The root's children, in document order.
    pub(crate) elements: Vec<TopElement>,
}

/// Scans `text`: its layout, or an error at the line where the XML goes wrong or where a xacro
/// expression sits.
pub(crate) fn scan(text: &str) -> Result<Scan, ModelError> {
    let mut reader = Reader::from_str(text);
    // End tags are matched here instead, to name the element left open and its line.
    reader.config_mut().check_end_names = false;
    let mut scanner = Scanner::new(text);
    loop {
        let start = offset(reader.buffer_position());
        let event = reader.read_event().map_err(|e| {
            let at = offset(reader.error_position());
            scanner.xml_error(at, &format!("not well-formed XML: {e}"))
        })?;
        let range = start..offset(reader.buffer_position());
        match event {
            Event::Eof => return scanner.finish(),
            Event::Start(tag) => {
                scanner.open(&tag, range.clone());
                scanner.refuse_xacro(range)?;
            }
            Event::Empty(tag) => {
                scanner.open(&tag, range.clone());
                scanner.refuse_xacro(range.clone())?;
                scanner.close(tag.name().as_ref(), range)?;
            }
            Event::End(tag) => scanner.close(tag.name().as_ref(), range)?,
            Event::Text(_) | Event::CData(_) => scanner.refuse_xacro(range)?,
            // Comments, declarations, processing instructions, entity references.
            _ => {}
        }
    }
}

/// The byte offset of the first start tag nested deeper than `limit` elements, if one is.
/// A streaming pass that keeps only a counter: it cannot itself be exhausted by the nesting
/// it looks for. Badly formed XML ends the pass (the parser's own error names it).
pub(crate) fn first_too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = false;
    let mut depth = 0usize;
    loop {
        let start = offset(reader.buffer_position());
        match reader.read_event() {
            Ok(Event::Start(_)) => {
                depth += 1;
                if depth > limit {
                    return Some(start);
                }
            }
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

fn offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

/// 1-based line numbers of byte offsets, counting each newline about once however many
/// offsets are asked for (they mostly increase).
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let newlines =
            |range: Range<usize>| self.text[range].iter().filter(|&&b| b == b'\n').count();
        if offset >= self.offset {
            self.line += newlines(self.offset..offset);
            self.offset = offset;
            self.line
        } else {
            self.line - newlines(offset..self.offset)
        }
    }
}

struct Scanner<'a> {
    text: &'a str,
    lines: LineCounter<'a>,
    /// The elements open at this point, outermost first: tag name and line.
    open: Vec<(String, usize)>,
    scan: Scan,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            lines: LineCounter {
                text: text.as_bytes(),
                offset: 0,
                line: 1,
            },
            open: Vec::new(),
            scan: Scan::default(),
        }
    }

    fn open(&mut self, tag: &BytesStart<'_>, range: Range<usize>) {
        let kind = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
        let line = self.lines.line_at(range.start);
        match self.open.len() {
            0 if self.scan.root_kind.is_empty() => {
                self.scan.root_kind = kind.clone();
                self.scan.root_tag = range;
                self.scan.root_line = line;
            }
            1 => self.scan.elements.push(TopElement {
                kind: kind.clone(),
                name: name_attribute(tag),
                range,
                line,
            }),
            _ => {}
        }
        self.open.push((kind, line));
    }

    /// Closes the innermost open element, which must be `name`.
    fn close(&mut self, name: &[u8], range: Range<usize>) -> Result<(), ModelError> {
        let found = String::from_utf8_lossy(name);
        match self.open.last() {
            Some((open, _)) if *open == found => {}
            Some(_) if self.open.iter().any(|(open, _)| *open == found) => {
                return Err(self.unclosed(&found, range.start));
            }
            _ => {
                let reason = format!("`</{}>` has no matching start tag", clipped(&found));
                return Err(self.xml_error(range.start, &reason));
            }
        }
        self.open.pop();
        if self.open.len() == 1 {
            if let Some(element) = self.scan.elements.last_mut() {
                element.range.end = range.end;
            }
        }
        Ok(())
    }

    /// The innermost open element is left open: `</found>` at byte `at` closes an outer one.
    fn unclosed(&mut self, found: &str, at: usize) -> ModelError {
        let found_line = self.lines.line_at(at);
        let (open, line) = self.open.last().cloned().unwrap_or_default();
        let reason = format!(
            "`<{}>` is not closed: `</{}>` on line {found_line} comes first",
            clipped(&open),
            clipped(found)
        );
        self.error_in(self.open.len(), line, reason)
    }

    fn finish(self) -> Result<Scan, ModelError> {
        if let Some((open, line)) = self.open.last() {
            let reason = format!("`<{}>` is never closed", clipped(open));
            return Err(self.error_in(self.open.len(), *line, reason));
        }
        if self.scan.root_kind.is_empty() {
            return Err(ModelError::Malformed {
                element: "the document".into(),
                reason: "no XML element: a URDF is one <robot> element".into(),
            }
            .at_line(1));
        }
        Ok(self.scan)
    }

    /// A xacro expression or element in this piece of text (a tag with its attributes, or
    /// text) is an error: a `<xacro:include>` or macro call left in would silently leave out
    /// the links it stands for.
    fn refuse_xacro(&mut self, range: Range<usize>) -> Result<(), ModelError> {
        let piece = self.text.get(range.clone()).unwrap_or_default();
        let markers = ["${", "$(", "<xacro:"];
        let Some(at) = markers.iter().filter_map(|m| piece.find(m)).min() else {
            return Ok(());
        };
        let expression = &piece[at..];
        // An expression up to its closing bracket, an element up to its name's end.
        let end = if expression.starts_with('<') {
            expression
                .find([' ', '>', '/', '\n'])
                .unwrap_or(expression.len())
        } else {
            expression
                .find(['}', ')'])
                .map_or(expression.len(), |e| e + 1)
        };
        let line = self.lines.line_at(range.start + at);
        Err(ModelError::Xacro {
            element: self.describe(self.open.len()),
            expression: clipped(&expression[..end]),
        }
        .at_line(line))
    }

    /// An XML error at byte `at`, in whatever element is open there.
    fn xml_error(&mut self, at: usize, reason: &str) -> ModelError {
        let line = self.lines.line_at(at);
        self.error_in(self.open.len(), line, clipped(reason))
    }

    fn error_in(&self, depth: usize, line: usize, reason: String) -> ModelError {
        ModelError::Malformed {
            element: self.describe(depth),
            reason,
        }
        .at_line(line)
    }

    /// The element that something `depth` elements deep belongs to: the root's child holding
    /// it, the root itself, or the document.
    fn describe(&self, depth: usize) -> String {
        match (depth, self.scan.elements.last()) {
            (0, _) => "the document".into(),
            (1, _) | (_, None) => format!("<{}>", clipped(&self.scan.root_kind)),
            (_, Some(element)) => element.describe(),
        }
    }
}

fn name_attribute(tag: &BytesStart<'_>) -> Option<String> {
    let attribute = tag.try_get_attribute("name").ok()??;
    match attribute.unescape_value() {
        Ok(value) => Some(value.into_owned()),
        Err(_) => Some(String::from_utf8_lossy(&attribute.value).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> String {
        scan(text).unwrap_err().to_string()
    }

    #[test]
    fn children_of_the_root_are_found_with_their_lines() {
        let text =
            "<robot name=\"r\">\n  <link name=\"a\"/>\n  <joint name=\"j\">\n  </joint>\n</robot>";
        let scan = scan(text).unwrap();
        assert_eq!(scan.root_kind, "robot");
        assert_eq!(&text[scan.root_tag.clone()], "<robot name=\"r\">");
        let found: Vec<_> = scan
            .elements
            .iter()
            .map(|e| (e.describe(), e.line, &text[e.range.clone()]))
            .collect();
        assert_eq!(
            found,
            [
                ("link 'a'".to_string(), 2, "<link name=\"a\"/>"),
                ("joint 'j'".to_string(), 3, "<joint name=\"j\">\n  </joint>"),
            ]
        );
    }

    #[test]
    fn unclosed_and_stray_tags_are_placed() {
        let m = message("<robot>\n<link name=\"a\">\n<visual>\n</link>\n</robot>");
        assert_eq!(
            m,
            "line 3: malformed URDF in link 'a': `<visual>` is not closed: `</link>` on line 4 comes first"
        );
        let m = message("<robot>\n<link name=\"a\">\n");
        assert_eq!(
            m,
            "line 2: malformed URDF in link 'a': `<link>` is never closed"
        );
        let m = message("<robot>\n<link name=\"a\"/>\n</joint>\n</robot>");
        assert_eq!(
            m,
            "line 3: malformed URDF in <robot>: `</joint>` has no matching start tag"
        );
        assert!(message("<robot/>\n</robot>").starts_with("line 2: "));
        assert!(message("").starts_with("line 1: "));
        assert!(message("<robot>\n<link name=\"a\" x=\"1/>\n</robot>").starts_with("line 2: "));
    }

    #[test]
    fn xacro_is_refused_but_not_in_comments() {
        let m = message("<robot>\n<link name=\"a\">\n<mass value=\"${mass1}\"/></link></robot>");
        assert!(
            m.starts_with("line 3: link 'a' holds the unexpanded xacro `${mass1}`"),
            "{m}"
        );
        // An include with no expression would silently leave out what it includes.
        let m = message(
            "<robot>\n<link name=\"a\"/>\n<xacro:include filename=\"arm.urdf\"/>\n</robot>",
        );
        assert!(
            m.starts_with("line 3: ") && m.contains("`<xacro:include`"),
            "{m}"
        );
        let m = message("<robot>\n<!-- $(find x) -->\n<gazebo>$(arg y)</gazebo></robot>");
        assert!(m.starts_with("line 3: <gazebo> holds"), "{m}");
    }

    #[test]
    fn line_counter_answers_offsets_in_any_order() {
        let text = "a\nb\nc\n";
        let mut lines = LineCounter {
            text: text.as_bytes(),
            offset: 0,
            line: 1,
        };
        assert_eq!(lines.line_at(5), 3);
        assert_eq!(lines.line_at(0), 1);
        assert_eq!(lines.line_at(2), 2);
        assert_eq!(lines.line_at(100), 4);
    }
}
