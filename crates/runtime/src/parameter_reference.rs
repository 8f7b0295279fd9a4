//! The parameter reference of the book (`docs/reference/parameters.md`), written from the
//! declarations themselves: the nodes' settings tables and each law's own declarations, so
//! the page cannot drift from what the nodes accept (a test compares the two).

use armctl_control::{controller_by_name, Cooperative, Declaration, Length, ParameterValue, Scope};
use armctl_model::Robot;

use crate::declarations::{controller_node_declarations, sim_node_declarations};

/// The whole page, with the per-joint defaults of the laws sized for `robot` (named `arm`).
pub fn reference_markdown(robot: &Robot, arm: &str) -> Result<String, String> {
    let mut page = String::from(
        "# Parameter reference\n\n\
         Written from the declarations by `ARMCTL_WRITE_DOCS=1 cargo test -p armctl_runtime \
         parameter_reference` (a test fails when this page and the code differ). \
         *live*: may be set while the node runs (`ros2 param set`, `armctl_set_parameter`); \
         the others only at start. Numbers in a range bound each element of an array.\n\n",
    );
    page += "## controller_node\n\nAlso the parameters of `armctl sim` (`--params`) and of \
             the C ABI and the ros2_control plugin, except where *Where* says: *node only* \
             is controller_node's own (its rate, topics, clock, action, thread), which the C \
             ABI refuses and the plugin does not declare; *host field* is given by the C \
             ABI's `ArmctlConfig` field of that name and by the plugin's `joints`, \
             `robot_description` and `controller`.\n\n";
    page += &table(&controller_node_declarations(), true);
    page += "\n## sim_node\n\n";
    page += &table(&sim_node_declarations(), false);
    page += &format!(
        "\n## The laws\n\nEach law's parameters join controller_node's when it is the \
         `controller`. Per-joint defaults are derived from the arm's model; shown here for \
         {arm}.\n"
    );
    for name in armctl_control::CONTROLLERS {
        let law = controller_by_name(name, robot).map_err(|e| format!("{name}: {e}"))?;
        page += &format!("\n### {name}\n\n");
        page += &table(law.parameters().declarations(), false);
    }
    let identity = nalgebra::IsometryMatrix3::identity();
    let pair = Cooperative::new(robot, [identity, identity]).map_err(|e| e.to_string())?;
    page += &format!("\n### {}\n\n", crate::configure::COOPERATIVE);
    page += &table(pair.parameters().declarations(), false);
    Ok(page)
}

/// One table row per declaration; `hosts`: with the *Where* column (controller_node's, whose
/// parameters the C ABI and the plugin share).
fn table(declarations: &[Declaration], hosts: bool) -> String {
    let mut out = String::from("| Parameter | Type | Default | Range or choices | Live |");
    out += if hosts { " Where |" } else { "" };
    out += " Description |\n|---|---|---|---|---|";
    out += if hosts { "---|" } else { "" };
    out += "---|\n";
    for d in declarations {
        out += &format!(
            "| `{}` | {} | {} | {} | {} |",
            d.name,
            kind(d),
            cell(&default(&d.default)),
            cell(&bounds(d)),
            if d.read_only { "" } else { "live" },
        );
        if hosts {
            out += match d.scope {
                Scope::Any => "  |",
                Scope::HostField => " host field |",
                Scope::NodeOnly => " node only |",
            };
        }
        out += &format!(" {} |\n", cell(&d.description));
    }
    out
}

fn kind(d: &Declaration) -> String {
    let length = match d.length {
        Length::Any => String::new(),
        Length::PerJoint => ", one per joint".into(),
        Length::PerJointOrNone => ", one per joint or none".into(),
        Length::Fixed(n) => format!(", {n}"),
    };
    format!("{}{length}", d.kind.name())
}

/// The default as YAML, numbers rounded to 5 significant digits (a derived gain's full
/// precision says nothing to a reader).
fn default(value: &ParameterValue) -> String {
    let short = |v: f64| format!("{}", format!("{v:.4e}").parse::<f64>().unwrap_or(v));
    match value {
        ParameterValue::Double(v) => short(*v),
        ParameterValue::DoubleArray(v) => {
            format!(
                "[{}]",
                v.iter().map(|x| short(*x)).collect::<Vec<_>>().join(", ")
            )
        }
        ParameterValue::String(s) if s.is_empty() => "\"\"".into(),
        other => other.to_yaml(),
    }
}

fn bounds(d: &Declaration) -> String {
    match (&d.choices, d.range) {
        (Some(choices), _) => choices.join(", "),
        (None, Some((lo, hi))) => format!("[{lo}, {hi}]"),
        (None, None) => String::new(),
    }
}

/// `text` for a table cell: `|` and HTML's `<`, `>` escaped, no line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The book's page is what the declarations say; `ARMCTL_WRITE_DOCS=1` rewrites it.
    #[test]
    fn parameter_reference_in_the_book_matches_the_declarations() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let urdf = std::fs::read_to_string(format!("{root}/urdf/panda.urdf")).unwrap();
        let robot = armctl_model::urdf_to_robot(&urdf, &armctl_model::ChainOptions::default())
            .unwrap()
            .robot;
        let page = reference_markdown(&robot, "the Panda (urdf/panda.urdf)").unwrap();
        let path = format!("{root}/docs/reference/parameters.md");
        if std::env::var_os("ARMCTL_WRITE_DOCS").is_some() {
            std::fs::write(&path, &page).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == page,
            "{path} is not what the declarations say: run ARMCTL_WRITE_DOCS=1 cargo test -p armctl_runtime parameter_reference"
        );
    }
}
