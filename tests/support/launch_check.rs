//! A checker for the package's XML launch files, without ROS: it evaluates the arguments and
//! substitutions (`$(var)`, `$(find-pkg-share)`, `$(command)`), and checks that every referenced
//! file exists, every executable is one the workspace builds (or one of a package the
//! package.xml depends on), every parameter given to an armctl node is declared by it (the node
//! is configured exactly as it would start), and the ros2_control configuration drives the
//! robot's joints on the topic controller_node publishes to, or, for armctl inside the
//! controller manager, configures armctl's plugin on the robot's chain as it would start.

use armctl_capi::ArmctlParameterScope;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use armctl_control::ParameterValue;
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::nodes::sim_node::SimNode;
use armctl_runtime::group_loop::GroupLoop;
use armctl_runtime::params_file::value_from_yaml;
use armctl_runtime::ros_args::RosArgs;
use armctl_runtime::startup::NodeStart;
use serde_yaml::Value;

/// Where the package's files are: the workspace (or an installed `share/armctl_ros`).
#[derive(Debug, Clone)]
pub struct Share {
    /// Directory holding `launch/`, `config/`, `urdf/`.
    pub root: PathBuf,
    /// The package's executables.
    pub executables: Vec<String>,
    /// The packages package.xml names as `exec_depend`.
    pub exec_depends: Vec<String>,
}

/// Executables of the ROS packages the launch files start (to catch typos).
const KNOWN_EXECUTABLES: [(&str, &[&str]); 5] = [
    ("robot_state_publisher", &["robot_state_publisher"]),
    ("controller_manager", &["ros2_control_node", "spawner"]),
    ("ros_gz_sim", &["create"]),
    ("ros_gz_bridge", &["parameter_bridge"]),
    ("xacro", &["xacro"]),
];

/// One launch of a file with some argument values, and what it found.
struct Run<'a> {
    share: &'a Share,
    file: String,
    values: BTreeMap<String, String>,
    problems: Vec<String>,
    /// `command_topic` given to controller_node, and ros2_control files with their robot.
    command_topic: Option<String>,
    ros2_control_files: Vec<PathBuf>,
}

/// Problems of launch file `file` (relative to `share.root`) with `args` set.
pub fn check_launch_file(share: &Share, file: &str, args: &[(&str, &str)]) -> Vec<String> {
    let mut run = Run {
        share,
        file: file.to_string(),
        values: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        problems: Vec::new(),
        command_topic: None,
        ros2_control_files: Vec::new(),
    };
    let path = share.root.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => run.check_text(&text),
        Err(e) => run.problem(format!("cannot read: {e}")),
    }
    run.check_ros2_control();
    run.problems
}

impl Run<'_> {
    fn problem(&mut self, text: String) {
        self.problems.push(format!("{}: {text}", self.file));
    }

    fn check_text(&mut self, text: &str) {
        let doc = match roxmltree::Document::parse(text) {
            Ok(doc) => doc,
            Err(e) => return self.problem(format!("not XML: {e}")),
        };
        let root = doc.root_element();
        if root.tag_name().name() != "launch" {
            return self.problem("the root element is not <launch>".into());
        }
        for element in root.children().filter(roxmltree::Node::is_element) {
            self.element(element);
        }
    }

    fn element(&mut self, e: roxmltree::Node<'_, '_>) {
        match e.tag_name().name() {
            "arg" => {
                let name = e.attribute("name").unwrap_or_default().to_string();
                if !self.values.contains_key(&name) {
                    match e.attribute("default").map(|d| self.substitute(d)) {
                        Some(Ok(v)) => drop(self.values.insert(name, v)),
                        Some(Err(p)) => self.problem(p),
                        None => self.problem(format!("argument '{name}' has no default")),
                    }
                }
            }
            "let" => {
                let name = e.attribute("name").unwrap_or_default().to_string();
                match self.substitute(e.attribute("value").unwrap_or_default()) {
                    Ok(v) => drop(self.values.insert(name, v)),
                    Err(p) => self.problem(p),
                }
            }
            "include" => {
                if let Err(p) = self.substitute(e.attribute("file").unwrap_or_default()) {
                    self.problem(p);
                }
            }
            "node" => self.node(e),
            other => self.problem(format!("unexpected element <{other}>")),
        }
    }

    /// Evaluates `$(...)` substitutions, innermost first.
    fn substitute(&mut self, text: &str) -> Result<String, String> {
        let Some(start) = text.find("$(") else {
            return Ok(text.to_string());
        };
        let mut depth = 0;
        let mut end = None;
        for (i, c) in text[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.ok_or_else(|| format!("unbalanced substitution in '{text}'"))?;
        let inner = self.substitute(&text[start + 2..end])?;
        let value = self.evaluate(&inner)?;
        Ok(format!(
            "{}{value}{}",
            &text[..start],
            self.substitute(&text[end + 1..])?
        ))
    }

    fn evaluate(&mut self, expression: &str) -> Result<String, String> {
        let (name, rest) = expression.split_once(' ').unwrap_or((expression, ""));
        let rest = rest.trim();
        match name {
            "var" => self
                .values
                .get(rest)
                .cloned()
                .ok_or_else(|| format!("undefined variable '{rest}'")),
            "find-pkg-share" if rest == "armctl_ros" => Ok(self.share.root.display().to_string()),
            "find-pkg-share" => {
                self.external_package(rest);
                Ok(format!("/opt/ros/share/{rest}"))
            }
            "command" => self.command(rest.trim_matches('\'')),
            other => Err(format!("unsupported substitution '{other}'")),
        }
    }

    fn external_package(&mut self, package: &str) {
        if !self.share.exec_depends.iter().any(|d| d == package) {
            self.problem(format!(
                "package '{package}' is used but not an exec_depend of package.xml"
            ));
        }
    }

    /// `$(command ...)`: the program must be known and the files it reads must exist.
    fn command(&mut self, command: &str) -> Result<String, String> {
        let words: Vec<&str> = command.split_whitespace().collect();
        match words.first().copied() {
            Some("sed") | Some("cat") => {}
            Some("xacro") => {
                self.external_package("xacro");
                self.check_xacro(&words[1..]);
            }
            other => return Err(format!("unexpected command {other:?}")),
        }
        for word in &words[1..] {
            let file = word.rsplit(":=").next().unwrap_or(word);
            if file.starts_with('/') && !Path::new(file).exists() {
                self.problem(format!("command reads a missing file {file}"));
            }
        }
        Ok("<command output>".into())
    }

    /// A xacro file of ours: its includes and the controller file it names must exist.
    fn check_xacro(&mut self, words: &[&str]) {
        let Some(file) = words.first() else { return };
        let Ok(text) = std::fs::read_to_string(file) else {
            return self.problem(format!("missing xacro file {file}"));
        };
        let mut args: BTreeMap<String, String> = words[1..]
            .iter()
            .filter_map(|w| {
                w.split_once(":=")
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let Ok(doc) = roxmltree::Document::parse(&text) else {
            return self.problem(format!("{file} is not XML"));
        };
        for e in doc.descendants().filter(|e| e.tag_name().name() == "arg") {
            if let (Some(n), Some(d)) = (e.attribute("name"), e.attribute("default")) {
                args.entry(n.to_string()).or_insert_with(|| d.to_string());
            }
        }
        let expand = |t: &str| xacro_expand(t, &args, &self.share.root);
        for e in doc
            .descendants()
            .filter(|e| e.tag_name().name() == "include")
        {
            let included = expand(e.attribute("filename").unwrap_or_default());
            if !Path::new(&included).is_file() {
                self.problem(format!("{file} includes a missing file {included}"));
            }
        }
    }

    fn node(&mut self, e: roxmltree::Node<'_, '_>) {
        let attribute = |n: &str| e.attribute(n).unwrap_or_default().to_string();
        let (pkg, exec) = (attribute("pkg"), attribute("exec"));
        let (mut files, mut values) = (Vec::new(), Vec::new());
        for param in e.children().filter(|c| c.tag_name().name() == "param") {
            match (
                param.attribute("from"),
                param.attribute("name"),
                param.attribute("value"),
            ) {
                (Some(from), _, _) => match self.substitute(from) {
                    Ok(f) if Path::new(&f).is_file() => files.push(f),
                    Ok(f) => self.problem(format!("{exec}: parameter file {f} does not exist")),
                    Err(p) => self.problem(p),
                },
                (None, Some(name), Some(value)) => match self.substitute(value) {
                    Ok(v) => values.push((name.to_string(), v)),
                    Err(p) => self.problem(p),
                },
                _ => self.problem(format!("{exec}: a <param> needs from= or name= and value=")),
            }
        }
        let args = self.substitute(&attribute("args")).unwrap_or_else(|p| {
            self.problem(p);
            String::new()
        });
        if pkg == "armctl_ros" {
            let name = attribute("name");
            let namespace = self.substitute(&attribute("namespace")).unwrap_or_default();
            self.armctl_node(&exec, &name, &namespace, files, values);
        } else {
            self.external_node(&pkg, &exec, &args, &files);
        }
    }

    /// Configures our node exactly as it would start: every parameter must be declared and valid.
    fn armctl_node(
        &mut self,
        exec: &str,
        name: &str,
        namespace: &str,
        files: Vec<String>,
        values: Vec<(String, String)>,
    ) {
        if !self.share.executables.iter().any(|x| x == exec) {
            return self.problem(format!("armctl_ros has no executable '{exec}'"));
        }
        if let Some((_, topic)) = values.iter().find(|(n, _)| n == "command_topic") {
            if exec == "controller_node" {
                self.command_topic = Some(topic.clone());
            }
        }
        let args = RosArgs {
            node_name: Some(name.to_string()).filter(|n| !n.is_empty()),
            namespace: Some(namespace.to_string()).filter(|n| !n.is_empty()),
            params_files: files,
            overrides: values,
            ..RosArgs::default()
        };
        let started = match exec {
            "controller_node" => ControllerNode::new(&args).map(drop),
            "sim_node" => SimNode::new(&args).map(drop),
            _ => Ok(()),
        };
        if let Err(e) = started {
            self.problem(format!("{exec} would not start: {e}"));
        }
    }

    fn external_node(&mut self, pkg: &str, exec: &str, args: &str, files: &[String]) {
        self.external_package(pkg);
        let known = KNOWN_EXECUTABLES
            .iter()
            .find(|(p, _)| *p == pkg)
            .map(|(_, e)| *e);
        if known.is_some_and(|execs| !execs.contains(&exec)) {
            self.problem(format!("package '{pkg}' has no executable '{exec}'"));
        }
        let words: Vec<&str> = args.split_whitespace().collect();
        let param_files = words
            .windows(2)
            .filter(|w| w[0] == "--param-file")
            .map(|w| w[1].to_string());
        for file in param_files.chain(files.iter().cloned()) {
            if !Path::new(&file).is_file() {
                self.problem(format!("{exec}: file {file} does not exist"));
            } else if pkg == "controller_manager" {
                self.ros2_control_files.push(PathBuf::from(file));
            }
        }
    }

    /// Every ros2_control file: the broadcaster, and an effort controller on the robot's
    /// joints whose command topic is controller_node's.
    fn check_ros2_control(&mut self) {
        let mut files = std::mem::take(&mut self.ros2_control_files);
        files.dedup();
        for file in files {
            if let Err(p) = self.ros2_control_file(&file) {
                self.problem(format!("{}: {p}", file.display()));
            }
        }
    }

    fn ros2_control_file(&self, file: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
        let yaml: Value = serde_yaml::from_str(&text).map_err(|e| e.to_string())?;
        let manager = &yaml["controller_manager"]["ros__parameters"];
        let type_of = |name: &str| manager[name]["type"].as_str().map(str::to_string);
        if type_of("joint_state_broadcaster").as_deref()
            != Some("joint_state_broadcaster/JointStateBroadcaster")
        {
            return Err(
                "no joint_state_broadcaster of type joint_state_broadcaster/JointStateBroadcaster"
                    .into(),
            );
        }
        if let Some(armctl) = controller_of_type(manager, IN_LOOP_TYPE) {
            return self.in_loop_controller(&yaml[armctl.as_str()]["ros__parameters"], &armctl);
        }
        let effort = controller_of_type(manager, "effort_controllers/JointGroupEffortController")
            .ok_or("no effort_controllers/JointGroupEffortController")?;
        let expected = format!("/{effort}/commands");
        if self.command_topic.as_deref() != Some(expected.as_str()) {
            return Err(format!(
                "controller_node publishes on {:?}, the effort controller listens on {expected}",
                self.command_topic
            ));
        }
        let joints: Vec<String> = yaml[effort.as_str()]["ros__parameters"]["joints"]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(|j| j.as_str().map(str::to_string))
            .collect();
        let chain = self.robot_joints()?;
        if joints != chain {
            return Err(format!(
                "{effort} drives {joints:?}, the robot's chain is {chain:?}"
            ));
        }
        Ok(())
    }

    /// armctl's controller_manager plugin: its parameters configure the controller exactly as
    /// the plugin gives them to the C ABI (the same runtime as controller_node), on the
    /// robot's URDF; `joints` must be the chain.
    fn in_loop_controller(&self, parameters: &Value, name: &str) -> Result<(), String> {
        let mut values = Vec::new();
        for (key, value) in parameters.as_mapping().into_iter().flatten() {
            let key = key.as_str().ok_or("a parameter name is not text")?;
            if IN_LOOP_MANAGER_KEYS.contains(&key) {
                continue; // the controller manager's, per controller
            }
            if ArmctlParameterScope::of(key) == ArmctlParameterScope::NodeOnly {
                let reason = ArmctlParameterScope::refusal(key).unwrap_or_default();
                return Err(format!("{name}: {reason}; the plugin ignores it"));
            }
            let value = value_from_yaml(key, value).map_err(|e| format!("{name}: {e}"))?;
            values.push((key.to_string(), value));
        }
        let urdf = std::fs::read_to_string(self.robot_urdf()?).map_err(|e| e.to_string())?;
        values.push(("robot_description".into(), ParameterValue::String(urdf)));
        let start = NodeStart {
            name: name.into(),
            namespace: "/".into(),
            remaps: vec![],
            values,
        };
        let runtime = GroupLoop::lone(&start).map_err(|e| format!("{name}: {e}"))?;
        let joints = match runtime.parameters().get("joints") {
            Some(ParameterValue::StringArray(joints)) => joints.clone(),
            _ => vec![],
        };
        let chain = self.robot_joints()?;
        if joints != chain {
            return Err(format!(
                "{name} drives {joints:?}, the robot's chain is {chain:?}"
            ));
        }
        Ok(())
    }

    fn robot_urdf(&self) -> Result<PathBuf, String> {
        let robot = self.values.get("robot").ok_or("no robot argument")?;
        Ok(self.share.root.join("urdf").join(format!("{robot}.urdf")))
    }

    fn robot_joints(&self) -> Result<Vec<String>, String> {
        let urdf = self.robot_urdf()?;
        let model =
            armctl_model::Robot::from_urdf_file(&urdf, &armctl_model::ChainOptions::default())
                .map_err(|e| e.to_string())?;
        Ok(model.joint_names().map(str::to_string).collect())
    }
}

/// Keys under an in-loop controller that the controller manager reads (a controller's own
/// `update_rate` is honoured by it), not armctl.
const IN_LOOP_MANAGER_KEYS: [&str; 5] = [
    "type",
    "is_async",
    "update_rate",
    "use_sim_time",
    "thread_priority",
];

/// The type of armctl's controller_manager plugin.
const IN_LOOP_TYPE: &str = "armctl_controllers/ModelBasedEffortController";

/// The name of the first controller of `kind` the controller manager's parameters declare.
fn controller_of_type(manager: &Value, kind: &str) -> Option<String> {
    manager
        .as_mapping()
        .into_iter()
        .flatten()
        .find(|(_, v)| v["type"].as_str() == Some(kind))
        .and_then(|(k, _)| k.as_str().map(str::to_string))
}

/// `$(find armctl_ros)` and `$(arg x)` in a xacro attribute.
fn xacro_expand(text: &str, args: &BTreeMap<String, String>, share: &Path) -> String {
    let mut out = text.replace("$(find armctl_ros)", &share.display().to_string());
    for (name, value) in args {
        out = out.replace(&format!("$(arg {name})"), value);
    }
    if out.contains("$(") && out != text {
        xacro_expand(&out, args, share)
    } else {
        out
    }
}

/// The package as the workspace holds it: `launch/ config/ urdf/` at the root, the
/// executables of the ROS package armctl_ros (`crates/ros_rcl/src/bin`), the run dependencies
/// (`exec_depend` and `depend`) of its package.xml.
pub fn workspace_share(root: &Path) -> Share {
    let package_dir = root.join("crates/ros_rcl");
    let mut executables: Vec<String> = std::fs::read_dir(package_dir.join("src/bin"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".rs")?.to_string();
            Some(name)
        })
        .collect();
    executables.sort();
    let package = std::fs::read_to_string(package_dir.join("package.xml")).unwrap_or_default();
    let exec_depends = roxmltree::Document::parse(&package)
        .map(|doc| {
            doc.descendants()
                .filter(|e| matches!(e.tag_name().name(), "exec_depend" | "depend"))
                .filter_map(|e| e.text().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Share {
        root: root.to_path_buf(),
        executables,
        exec_depends,
    }
}

/// `(robot, controller)` of every `config/<robot>_<controller>.yaml` whose robot is in `urdf/`.
pub fn configured_pairs(share: &Share) -> Vec<(String, String)> {
    let robots: Vec<String> = std::fs::read_dir(share.root.join("urdf"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".urdf")
                .map(str::to_string)
        })
        .collect();
    let mut pairs: Vec<(String, String)> = std::fs::read_dir(share.root.join("config"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let stem = e.file_name().to_str()?.strip_suffix(".yaml")?.to_string();
            let robot = robots
                .iter()
                .filter(|r| stem.starts_with(&format!("{r}_")))
                .max_by_key(|r| r.len())?;
            let controller = stem[robot.len() + 1..].to_string();
            // The controller manager's files, not controller_node's.
            (controller != "ros2_controllers" && controller != "armctl_controllers")
                .then(|| (robot.clone(), controller))
        })
        .collect();
    pairs.sort();
    pairs
}
