// Runs the plugin (armctl_controllers/ModelBasedEffortController) on the stand-in, as a
// controller manager would drive it, without ROS: init with the parameters of a controller
// YAML, configure, interfaces, activate, a JointTrajectory on ~/joint_trajectory, one update()
// per row of an `armctl sim` run (Panda, computed torque) with the run's states in the state
// interfaces, live parameters, bad states, deactivation, cleanup. It checks:
//  1. the effort interfaces get the run's efforts to 1e-9, row by row;
//  2. armctl's parameters are declared with descriptors (their range, choices and read-only in
//     text), controller_node's own are not, and `ros2 param set` (through the stand-in's
//     rclcpp checks, in rclcpp's order and words) is refused with armctl's reason naming the
//     parameter, never rclcpp's, or accepted and applied: while configured; before configure
//     and after cleanup ArmctlConfig's are checked at once and armctl's others are stored as
//     set (as a Humble spawner's --param-file sets them) and checked by the configure, which
//     fails with armctl's reason naming a bad or unknown one and otherwise uses their values;
//  3. NaN and (Jazzy) unreadable states hold and are logged naming the joint; control resumes;
//  4. deactivation writes the gravity hold once; cleanup drops the subscriptions.
// This is the stand-in, not ROS: it shows the plugin's logic runs as intended against the
// stand-in's behaviour, not that a real controller_manager drives it the same way.
// Usage: run_plugin URDF RUN_CSV WAYPOINTS  (files cpp_program.rs prepares)

#include <cmath>
#include <deque>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "armctl.h"
#include "armctl_controllers/model_based_effort_controller.hpp"

namespace
{
using controller_interface::CallbackReturn;
using controller_interface::return_type;

int failures = 0;

void check(bool condition, const std::string & what)
{
  if (!condition) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

std::string read_file(const char * path)
{
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> cells_of(const std::string & line)
{
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) {
    cells.push_back(cell);
  }
  return cells;
}

// The run: its joints and, per row, t and the q, qd, effort and external_torque columns.
struct Run
{
  std::vector<std::string> joints;
  std::vector<double> t;
  std::vector<std::vector<double>> q, qd, effort, external;
};

Run read_run(const char * path)
{
  Run run;
  std::stringstream lines(read_file(path));
  std::string line;
  std::getline(lines, line);
  const auto header = cells_of(line);
  for (const auto & cell : header) {
    if (cell.rfind("effort_", 0) == 0) {
      run.joints.push_back(cell.substr(7));
    }
  }
  auto column = [&](const std::string & name) {
    for (std::size_t k = 0; k < header.size(); ++k) {
      if (header[k] == name) {
        return k;
      }
    }
    return std::size_t{0};
  };
  while (std::getline(lines, line)) {
    const auto cells = cells_of(line);
    run.t.push_back(std::strtod(cells[0].c_str(), nullptr));
    std::vector<double> q, qd, effort, external;
    for (const auto & joint : run.joints) {
      q.push_back(std::strtod(cells[column("q_" + joint)].c_str(), nullptr));
      qd.push_back(std::strtod(cells[column("qd_" + joint)].c_str(), nullptr));
      effort.push_back(std::strtod(cells[column("effort_" + joint)].c_str(), nullptr));
      const std::size_t estimate = column("external_torque_" + joint);
      external.push_back(estimate > 0 ? std::strtod(cells[estimate].c_str(), nullptr) : NAN);
    }
    run.q.push_back(q);
    run.qd.push_back(qd);
    run.effort.push_back(effort);
    run.external.push_back(external);
  }
  return run;
}

// Waypoints, one "time q1 q2 ..." per line, as a JointTrajectory starting at once.
trajectory_msgs::msg::JointTrajectory read_waypoints(
  const char * path, const std::vector<std::string> & joints)
{
  trajectory_msgs::msg::JointTrajectory msg;
  msg.joint_names = joints;
  std::stringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream values(line);
    double time = 0.0, v = 0.0;
    if (!(values >> time)) {
      continue;
    }
    trajectory_msgs::msg::JointTrajectoryPoint point;
    while (values >> v) {
      point.positions.push_back(v);
    }
    point.time_from_start.sec = static_cast<int32_t>(std::floor(time));
    point.time_from_start.nanosec =
      static_cast<uint32_t>(std::llround((time - std::floor(time)) * 1e9));
    msg.points.push_back(point);
  }
  return msg;
}

// The hardware side: one value per interface, and flags that make a state unreadable.
struct Hardware
{
  explicit Hardware(std::size_t n) : q(n), qd(n), effort(n, 0.0), locked(n, 0) {}
  std::vector<double> q, qd, effort;
  std::deque<bool> locked;  // addresses stay put; std::vector<bool> has none

  void assign(armctl_controllers::ModelBasedEffortController & controller,
              const std::vector<std::string> & joints)
  {
    std::vector<hardware_interface::LoanedCommandInterface> commands;
    std::vector<hardware_interface::LoanedStateInterface> states;
    for (std::size_t j = 0; j < joints.size(); ++j) {
      commands.emplace_back(joints[j], "effort", &effort[j]);
      states.emplace_back(joints[j], "position", &q[j], &locked[j]);
      states.emplace_back(joints[j], "velocity", &qd[j]);
    }
    controller.assign_interfaces(std::move(commands), std::move(states));
  }
};

rclcpp::Time at(double t) { return rclcpp::Time(static_cast<int64_t>(std::llround(t * 1e9))); }

const rclcpp::Duration kPeriod(0, 1000000);

bool logged(const std::string & part)
{
  for (const auto & line : rclcpp::standin::log_lines()) {
    if (line.text.find(part) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// 1: the replay.
void replay(
  armctl_controllers::ModelBasedEffortController & controller, Hardware & hardware, const Run & run,
  const trajectory_msgs::msg::JointTrajectory & waypoints)
{
  auto node = controller.get_node();
  check(
    node->standin_deliver("~/joint_trajectory", waypoints), "~/joint_trajectory is subscribed");
  double largest = 0.0;
  for (std::size_t k = 0; k < run.t.size(); ++k) {
    hardware.q = run.q[k];
    hardware.qd = run.qd[k];
    check(controller.update(at(run.t[k]), kPeriod) == return_type::OK, "update returns OK");
    for (std::size_t j = 0; j < run.joints.size(); ++j) {
      largest = std::fmax(largest, std::fabs(hardware.effort[j] - run.effort[k][j]));
    }
    if (k % 50 == 0) {
      node->standin_fire_timers();
    }
  }
  std::printf(
    "replay through the plugin: %zu updates, largest effort difference %.3e N m\n", run.t.size(),
    largest);
  check(run.t.size() > 1000, "the run has rows");
  check(largest <= 1e-9, "the plugin's efforts match armctl sim to 1e-9");
  check(
    !logged("joint trajectory refused") && !logged("refused when applied"),
    "nothing was refused during the replay");
  // ~/external_torques: one message per update, named joints, armctl sim's estimate.
  const auto * torques = node->standin_published<sensor_msgs::msg::JointState>("~/external_torques");
  check(torques && torques->size() == run.t.size(), "~/external_torques at every update");
  double estimate_difference = 0.0;
  for (std::size_t k = 0; torques && k < torques->size() && k < run.t.size(); ++k) {
    const auto & message = (*torques)[k];
    check(message.name == run.joints && message.effort.size() == run.joints.size(),
          "~/external_torques names every joint");
    for (std::size_t j = 0; j < message.effort.size(); ++j) {
      estimate_difference =
        std::fmax(estimate_difference, std::fabs(message.effort[j] - run.external[k][j]));
    }
  }
  std::printf("~/external_torques against armctl sim's estimate: largest difference %.3e N m\n",
              estimate_difference);
  check(estimate_difference <= 1e-9, "~/external_torques is armctl sim's estimate to 1e-9");
  if (torques && !torques->empty()) {
    const auto & last = torques->back();
    const double stamp = last.header.stamp.sec + last.header.stamp.nanosec * 1e-9;
    check(std::fabs(stamp - run.t.back()) < 1e-6, "~/external_torques is stamped with the update's time");
  }
  // ~/external_torque_bounds: one message per update, named joints, positive bounds.
  const auto * bounds =
    node->standin_published<sensor_msgs::msg::JointState>("~/external_torque_bounds");
  check(bounds && bounds->size() == run.t.size(), "~/external_torque_bounds at every update");
  if (bounds && !bounds->empty()) {
    const auto & last = bounds->back();
    bool positive = last.name == run.joints && last.effort.size() == run.joints.size();
    for (const double b : last.effort) {
      positive = positive && std::isfinite(b) && b > 0.0;
    }
    check(positive, "~/external_torque_bounds names every joint, each bound positive");
  }
  const auto * wrenches =
    node->standin_published<geometry_msgs::msg::WrenchStamped>("~/external_wrench_estimate");
  check(wrenches && wrenches->size() == run.t.size(), "~/external_wrench_estimate at every update");
  check(wrenches && !wrenches->empty() && !wrenches->back().header.frame_id.empty() &&
          std::isfinite(wrenches->back().wrench.force.z),
        "~/external_wrench_estimate is finite, in the tip link's frame");
}

rclcpp::Parameter doubles(const char * name, std::size_t n, double value)
{
  return rclcpp::Parameter(name, rclcpp::ParameterValue(std::vector<double>(n, value)));
}

template <typename T>
rclcpp::Parameter one(const char * name, const T & value)
{
  return rclcpp::Parameter(name, rclcpp::ParameterValue(value));
}

bool has(const std::string & text, const std::string & part)
{
  return text.find(part) != std::string::npos;
}

// rclcpp's own refusals (the stand-in's, in rclcpp's words), which must never reach the user
// for a parameter armctl judges.
bool rclcpp_text(const std::string & reason)
{
  return has(reason, "cannot be set because") || has(reason, "Wrong parameter type") ||
         has(reason, "doesn't comply with") || has(reason, "cannot undeclare");
}

// `parameters` is refused with armctl's reason, which names `name` and holds `part`.
void refused_by_armctl(
  const rclcpp_lifecycle::LifecycleNode::SharedPtr & node,
  const std::vector<rclcpp::Parameter> & parameters, const std::string & name,
  const std::string & part, const std::string & what)
{
  const auto result = node->standin_set_parameters(parameters);
  check(
    !result.successful && has(result.reason, "parameter '" + name + "'") &&
      has(result.reason, part) && !rclcpp_text(result.reason),
    what + " is refused with armctl's reason: " + result.reason);
  std::printf("  %s: %s\n", what.c_str(), result.reason.c_str());
}

void accepted(
  const rclcpp_lifecycle::LifecycleNode::SharedPtr & node,
  const std::vector<rclcpp::Parameter> & parameters, const std::string & what)
{
  const auto result = node->standin_set_parameters(parameters);
  check(result.successful, what + " is accepted: " + result.reason);
}

// The stand-in's rclcpp refuses what rclcpp refuses, with its text, before any callback: a
// descriptor with a range, a fixed type or a read-only flag would beat armctl's reason here too.
void standin_is_strict()
{
  auto node = std::make_shared<rclcpp_lifecycle::LifecycleNode>("probe", "");
  rcl_interfaces::msg::ParameterDescriptor ranged;
  rcl_interfaces::msg::FloatingPointRange range;
  range.to_value = 1.0;
  ranged.floating_point_range.push_back(range);
  node->declare_parameter("ranged", rclcpp::ParameterValue(0.5), ranged);
  rcl_interfaces::msg::ParameterDescriptor fixed;
  fixed.read_only = true;
  node->declare_parameter("fixed", rclcpp::ParameterValue(0.5), fixed);
  const auto reason = [&](const rclcpp::Parameter & p) {
    return node->standin_set_parameters({p}).reason;
  };
  check(
    reason(one("ranged", 2.0)) == "Parameter {ranged} doesn't comply with floating point range." &&
      reason(one("ranged", std::string("x"))) ==
        "Wrong parameter type, parameter {ranged} is of type {double}, setting it to {string} "
        "is not allowed." &&
      reason(one("fixed", 1.0)) == "parameter 'fixed' cannot be set because it is read-only" &&
      reason(one("kq", 1.0)) == "parameter 'kq' cannot be set because it was not declared",
    "the stand-in refuses a range, a type, a read-only and an undeclared name as rclcpp does");
}

// on_configure fails (the controller stays unconfigured: nothing subscribed) and logs an error
// naming `name` with armctl's reason, which holds `part`.
void configure_fails(
  armctl_controllers::ModelBasedEffortController & controller, const std::string & name,
  const std::string & part, const std::string & what)
{
  const std::size_t before = rclcpp::standin::log_lines().size();
  check(
    controller.on_configure(rclcpp_lifecycle::State()) == CallbackReturn::FAILURE,
    what + ": on_configure fails");
  std::string error;
  const auto lines = rclcpp::standin::log_lines();
  for (std::size_t k = before; k < lines.size(); ++k) {
    if (lines[k].level == 'E' && has(lines[k].text, "parameter '" + name + "'")) {
      error = lines[k].text;
    }
  }
  check(
    has(error, part) && !rclcpp_text(error),
    what + ": configure's error names the parameter with armctl's reason: " + error);
  check(
    !controller.get_node()->standin_deliver(
      "~/joint_trajectory", trajectory_msgs::msg::JointTrajectory()),
    what + ": the controller stays unconfigured");
  std::printf("  %s: configure fails: %s\n", what.c_str(), error.c_str());
}

double number(const rclcpp_lifecycle::LifecycleNode::SharedPtr & node, const char * name)
{
  return node->get_parameter(name).get_parameter_value().get<double>();
}

// 2a: before configure armctl has no handle: ArmctlConfig's parameters are checked by type and
// choices, the manager's pass, armctl's others are stored as set and checked by the configure
// (which fails, naming a bad value or an unknown name, until they are set right or deleted).
// Leaves a valid state_timeout of 0.25 set, for the configure that follows.
void parameters_before_configure(
  armctl_controllers::ModelBasedEffortController & controller, std::size_t n)
{
  auto node = controller.get_node();
  refused_by_armctl(
    node, {one("controller", std::string("no_such_law"))}, "controller",
    "'no_such_law' is not one of", "an unknown law");
  refused_by_armctl(
    node, {one("tip_link", 3.0)}, "tip_link", "expected string, got double",
    "a number for tip_link");
  check(
    node->get_parameter("tip_link").get_parameter_value().get<std::string>().empty(),
    "a refused tip_link is not stored");
  accepted(node, {one("controller", std::string("computed_torque"))}, "a law before configure");
  accepted(
    node, {one("update_rate", int64_t{1000}), one("is_async", false)}, "the manager's parameters");

  accepted(node, {doubles("kd", n, -1.0)}, "kd -1 before configure (stored unchecked)");
  check(
    node->has_parameter("kd") &&
      node->get_parameter("kd").get_parameter_value().get<std::vector<double>>()[0] == -1.0,
    "kd -1 is stored as set");
  configure_fails(controller, "kd", "outside", "kd -1 set before configure");
  accepted(node, {rclcpp::Parameter("kd")}, "deleting kd before configure");
  check(!node->has_parameter("kd"), "the deleted kd is no longer stored");
  accepted(node, {one("state_timeout", -1.0)}, "a negative state_timeout before configure");
  configure_fails(
    controller, "state_timeout", "outside", "a negative state_timeout set before configure");
  accepted(node, {one("state_timeout", 0.25)}, "state_timeout 0.25 before configure");
  accepted(node, {one("kq", 1.0)}, "kq before configure (stored unchecked)");
  check(node->has_parameter("kq"), "kq is stored as set");
  configure_fails(controller, "kq", "not declared", "kq set before configure");
  accepted(node, {rclcpp::Parameter("kq")}, "deleting kq before configure");
  accepted(node, {one("command_topic", std::string("x"))}, "command_topic before configure");
  configure_fails(
    controller, "command_topic", "controller_node's own", "command_topic set before configure");
  accepted(node, {rclcpp::Parameter("command_topic")}, "deleting command_topic before configure");
  check(
    !node->has_parameter("kq") && !node->has_parameter("command_topic"),
    "the deleted names are no longer stored");
}

// After the configure that follows parameters_before_configure(): it took the values set before.
void configured_with_values_set_before(const rclcpp_lifecycle::LifecycleNode::SharedPtr & node)
{
  bool warned = false;
  for (const auto & line : rclcpp::standin::log_lines()) {
    warned = warned || (line.level == 'W' && has(line.text, "parameter 'kpp': not declared") &&
                        has(line.text, ": ignored"));
  }
  check(
    warned,
    "a misspelt name of the parameter file is warned about at configure, naming it, with "
    "armctl's reason, and said to be ignored");
  check(number(node, "state_timeout") == 0.25, "the state_timeout set before configure is kept");
  const auto * kd = node->standin_descriptor("kd");
  check(
    kd && has(kd->additional_constraints, "each element in [0, ") &&
      node->get_parameter("kd").get_parameter_value().get<std::vector<double>>()[0] > 0.0,
    "the deleted kd is declared again at configure, with armctl's value and descriptor");
}

// 2b: describe: no range, type or read-only flag for rclcpp; all of them in text.
void descriptors(const rclcpp_lifecycle::LifecycleNode::SharedPtr & node)
{
  const auto * kp = node->standin_descriptor("kp");
  check(
    kp && !kp->description.empty() && !kp->read_only && kp->dynamic_typing &&
      has(kp->additional_constraints, "each element in [0, "),
    "kp is declared with its description and its range in text");
  const auto * safe_mode = node->standin_descriptor("safe_mode");
  check(
    safe_mode && safe_mode->additional_constraints == "one of: gravity, zero",
    "safe_mode's choices are in its descriptor");
  const auto * retract = node->standin_descriptor("collision_retract_distance");
  check(
    retract && retract->floating_point_range.empty() &&
      retract->additional_constraints == "in [0.001, 1]",
    "a number's range is in text, not in floating_point_range");
  const auto * update_rate = node->standin_descriptor("update_rate");
  check(
    update_rate && update_rate->description.empty() && !node->has_parameter("command_topic"),
    "controller_node's update_rate and command_topic are not declared (update_rate is init()'s)");
  const auto * tip = node->standin_descriptor("tip_link");
  check(
    tip && !tip->read_only && tip->additional_constraints == "read-only while configured" &&
      tip->description.rfind("Tip link of the chain", 0) == 0,
    "tip_link is declared in on_init with armctl's description, read-only in text");
  const auto * limits = node->standin_descriptor("effort_limits");
  check(
    limits && !limits->read_only &&
      has(limits->additional_constraints, "read-only: a start value, taken at configure"),
    "effort_limits is read-only in text");
}

// 2c: while configured every refusal is armctl's; a batch is refused whole.
void parameters(armctl_controllers::ModelBasedEffortController & controller, std::size_t n)
{
  auto node = controller.get_node();
  descriptors(node);
  refused_by_armctl(node, {doubles("kd", n, -1.0)}, "kd", "", "a negative kd");
  // Refused as a batch: the valid kp must not stay behind on either handle.
  auto result = node->standin_set_parameters({doubles("kp", n, 100.0), doubles("kd", n, -1.0)});
  check(!result.successful, "a batch with a bad value is refused");
  check(
    node->get_parameter("kp").get_parameter_value().get<std::vector<double>>()[0] != 100.0,
    "the batch's valid kp was not applied");
  accepted(node, {doubles("kd", n, 30.0)}, "kd 30");
  refused_by_armctl(node, {one("kq", 1.0)}, "kq", "not declared", "an undeclared name");
  check(!node->has_parameter("kq"), "the refused undeclared name is not stored");
  refused_by_armctl(
    node, {one("state_timeout", -1.0)}, "state_timeout", "outside", "a negative state_timeout");
  refused_by_armctl(
    node, {one("collision_retract_distance", 5.0)}, "collision_retract_distance", "outside",
    "a collision_retract_distance beyond its range");
  refused_by_armctl(
    node, {one("tip_link", std::string("panda_link7"))}, "tip_link", "read-only",
    "tip_link while configured");
  refused_by_armctl(
    node, {one("joints", std::vector<std::string>{"a"})}, "joints", "read-only",
    "joints while configured");
  refused_by_armctl(
    node, {doubles("effort_limits", n, 1.0)}, "effort_limits", "read-only", "effort_limits");
  refused_by_armctl(
    node, {one("kp", std::string("stiff"))}, "kp", "expected double array", "a string for kp");
  refused_by_armctl(
    node, {rclcpp::Parameter("kp")}, "kp", "cannot be undeclared", "undeclaring kp");
  check(node->has_parameter("kp"), "kp stays declared");
  refused_by_armctl(
    node, {one("safe_mode", std::string("coast"))}, "safe_mode", "not one of",
    "an unknown safe_mode");
  refused_by_armctl(
    node, {one("command_topic", std::string("x"))}, "command_topic", "controller_node's own",
    "command_topic");
  // Integers for a double are widened by armctl (dynamic typing lets them through rclcpp).
  accepted(node, {one("state_timeout", int64_t{1})}, "an integer state_timeout");
  accepted(node, {one("state_timeout", 0.1)}, "state_timeout 0.1");
  accepted(node, {one("update_rate", int64_t{500})}, "the manager's update_rate");
  std::printf("parameters: declared with text constraints; refusals carry armctl's reason\n");
}

// 3: bad states hold, logged, and control resumes; returns the state the arm was left in.
void faults(armctl_controllers::ModelBasedEffortController & controller, Hardware & hardware,
            double t)
{
  auto node = controller.get_node();
  const std::vector<double> q = hardware.q;
  hardware.q[2] = std::nan("");
  check(controller.update(at(t), kPeriod) == return_type::OK, "update OK while holding");
  node->standin_fire_timers();
  check(logged("panda_joint3"), "the NaN state is logged naming the joint");
  hardware.q = q;
  check(controller.update(at(t + 0.001), kPeriod) == return_type::OK, "update OK on resuming");
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  hardware.locked[4] = true;
  check(controller.update(at(t + 0.002), kPeriod) == return_type::OK, "update OK while holding");
  node->standin_fire_timers();
  check(logged("joint 'panda_joint5' has no reading"), "an unreadable joint is logged");
  hardware.locked[4] = false;
  check(controller.update(at(t + 0.003), kPeriod) == return_type::OK, "update OK on resuming");
#endif
  for (double e : hardware.effort) {
    check(std::isfinite(e), "the efforts stay finite");
  }
  std::printf("faults: held and logged, control resumed\n");
}

// The gravity hold at `q`, through a handle of its own.
std::vector<double> gravity_hold(
  const std::string & urdf, const std::vector<std::string> & joints, const std::vector<double> & q)
{
  std::vector<const char *> names;
  for (const auto & joint : joints) {
    names.push_back(joint.c_str());
  }
  ArmctlConfig config{};
  config.urdf = urdf.c_str();
  config.joints = names.data();
  config.joint_count = names.size();
  config.controller = "computed_torque";
  ArmctlController * handle = nullptr;
  char error[256];
  std::vector<double> efforts(q.size(), std::nan("")), qd(q.size(), 0.0);
  if (armctl_create(&config, &handle, error, sizeof error) == ARMCTL_STATUS_OK) {
    armctl_update(handle, 0.0, 1e-3, q.data(), qd.data(), efforts.data(), nullptr);
    armctl_safe_command(handle, efforts.data());
  }
  armctl_free(handle);
  return efforts;
}

void deactivate_and_clean_up(
  armctl_controllers::ModelBasedEffortController & controller, Hardware & hardware,
  const std::string & urdf, const std::vector<std::string> & joints)
{
  const std::vector<double> expected = gravity_hold(urdf, joints, hardware.q);
  check(controller.on_deactivate(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "deactivates");
  controller.release_interfaces();
  double largest = 0.0;
  for (std::size_t j = 0; j < joints.size(); ++j) {
    largest = std::fmax(largest, std::fabs(hardware.effort[j] - expected[j]));
  }
  check(largest <= 1e-9, "deactivation writes the gravity hold at the last configuration");
  auto node = controller.get_node();
  node->standin_fire_timers();
  check(logged("deactivated: wrote the safe_mode command once"), "deactivation is logged");
  check(!logged("refused when applied"), "every accepted parameter was applied in update()");
  check(controller.on_cleanup(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "cleans up");
  check(
    !node->standin_deliver("~/joint_trajectory", trajectory_msgs::msg::JointTrajectory()),
    "no subscription after cleanup");
  // Unconfigured again: armctl's names are stored as set and checked by the next configure.
  const std::size_t n = joints.size();
  accepted(node, {doubles("kd", n, -1.0)}, "kd -1 after cleanup (stored unchecked)");
  configure_fails(controller, "kd", "outside", "kd -1 set after cleanup");
  accepted(node, {doubles("kd", n, 31.0), one("kq", 1.0)}, "kd 31 and kq after cleanup");
  configure_fails(controller, "kq", "not declared", "kq set after cleanup");
  accepted(node, {rclcpp::Parameter("kq")}, "deleting kq after cleanup");
  check(
    controller.on_configure(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS,
    "configures again with the kd set after cleanup");
  check(
    node->get_parameter("kd").get_parameter_value().get<std::vector<double>>() ==
      std::vector<double>(n, 31.0),
    "kd 31 set after cleanup is the configured value");
  refused_by_armctl(node, {one("kq", 1.0)}, "kq", "not declared", "kq configured again");
  check(
    controller.on_cleanup(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "cleans up again");
  accepted(node, {one("tip_link", std::string(""))}, "tip_link after cleanup");
  std::printf("deactivation: gravity hold written (difference %.3e N m); cleaned up\n", largest);
}

// armctl's efforts, through a handle of its own created with `start` (kp, kd), for two updates:
// holding at q0 at `t`, then at q1 a millisecond later, as the plugin runs them after activation.
std::vector<double> reference_efforts(
  const std::string & urdf, const std::vector<std::string> & joints,
  const std::vector<std::pair<std::string, std::vector<double>>> & start,
  const std::vector<double> & q0, const std::vector<double> & q1, double t)
{
  std::vector<const char *> names;
  for (const auto & joint : joints) {
    names.push_back(joint.c_str());
  }
  std::vector<ArmctlNamedValue> values;
  for (const auto & entry : start) {
    ArmctlValue v{};
    v.kind = ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY;
    v.numbers = entry.second.data();
    v.count = entry.second.size();
    values.push_back(ArmctlNamedValue{entry.first.c_str(), v});
  }
  ArmctlConfig config{};
  config.urdf = urdf.c_str();
  config.joints = names.data();
  config.joint_count = names.size();
  config.controller = "computed_torque";
  config.parameters = values.data();
  config.parameter_count = values.size();
  ArmctlController * handle = nullptr;
  char error[256] = {};
  std::vector<double> efforts(q0.size(), std::nan("")), qd(q0.size(), 0.0);
  const bool ok = armctl_create(&config, &handle, error, sizeof error) == ARMCTL_STATUS_OK &&
                  armctl_reset(handle) == ARMCTL_STATUS_OK &&
                  armctl_update(handle, t, 1e-3, q0.data(), qd.data(), efforts.data(), nullptr) ==
                    ARMCTL_STATUS_OK &&
                  armctl_update(
                    handle, t + 1e-3, 1e-3, q1.data(), qd.data(), efforts.data(), nullptr) ==
                    ARMCTL_STATUS_OK;
  check(ok, std::string("the reference handle runs: ") + error);
  armctl_free(handle);
  return efforts;
}

double largest_difference(const std::vector<double> & a, const std::vector<double> & b)
{
  double largest = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t j = 0; j < a.size() && j < b.size(); ++j) {
    largest = std::fmax(largest, std::isfinite(a[j] - b[j]) ? std::fabs(a[j] - b[j]) : INFINITY);
  }
  return largest;
}

// 5: gains set before configure (as a Humble spawner's --param-file sets them) and after cleanup
// are the ones the configured controller's handle uses: its efforts are those of a handle
// created with them, and differ from those with armctl's defaults.
void gains_set_before_configure_are_used(const std::string & urdf, const Run & run)
{
  const std::size_t n = run.joints.size();
  std::map<std::string, rclcpp::ParameterValue> yaml{
    {"joints", rclcpp::ParameterValue(run.joints)},
    {"controller", rclcpp::ParameterValue(std::string("computed_torque"))},
  };
#ifndef ARMCTL_ROS_DISTRO_JAZZY
  yaml.emplace("robot_description", rclcpp::ParameterValue(urdf));
#endif
  armctl_controllers::ModelBasedEffortController controller;
  check(controller.standin_init(urdf, yaml) == CallbackReturn::SUCCESS, "a second on_init");
  auto node = controller.get_node();
  Hardware hardware(n);
  std::vector<double> q1 = run.q[0];
  q1[1] += 0.02;
  q1[3] -= 0.03;
  const auto defaults = reference_efforts(urdf, run.joints, {}, run.q[0], q1, 0.0);
  // Configures with `kp` and `kd` set before it, runs the two updates, returns the efforts.
  const auto run_with = [&](double kp, double kd, double t, const std::string & when) {
    accepted(node, {doubles("kp", n, kp), doubles("kd", n, kd)}, "kp and kd " + when);
    check(
      controller.on_configure(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS,
      "configures with the gains set " + when);
    check(
      node->get_parameter("kp").get_parameter_value().get<std::vector<double>>() ==
        std::vector<double>(n, kp),
      "kp set " + when + " reads back after configure");
    hardware.assign(controller, run.joints);
    check(
      controller.on_activate(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "activates");
    hardware.q = run.q[0];
    hardware.qd.assign(n, 0.0);
    check(controller.update(at(t), kPeriod) == return_type::OK, "update OK");
    hardware.q = q1;
    check(controller.update(at(t + 1e-3), kPeriod) == return_type::OK, "update OK");
    const std::vector<double> efforts = hardware.effort;
    const auto expected = reference_efforts(
      urdf, run.joints, {{"kp", std::vector<double>(n, kp)}, {"kd", std::vector<double>(n, kd)}},
      run.q[0], q1, t);
    const double difference = largest_difference(efforts, expected);
    const double from_defaults = largest_difference(efforts, defaults);
    check(
      difference <= 1e-9 && from_defaults > 1e-3,
      "the gains set " + when + " are the handle's (difference " + std::to_string(difference) +
        " N m; " + std::to_string(from_defaults) + " N m from armctl's defaults)");
    std::printf(
      "gains set %s: efforts match a handle created with them (%.3e N m), %.3e N m from the "
      "defaults'\n",
      when.c_str(), difference, from_defaults);
    check(
      controller.on_deactivate(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS,
      "deactivates");
    controller.release_interfaces();
    check(controller.on_cleanup(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "cleans up");
  };
  run_with(500.0, 45.0, 0.0, "before configure");
  run_with(250.0, 25.0, 1.0, "after cleanup");
}
}  // namespace

int main(int argc, char ** argv)
{
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s URDF RUN_CSV WAYPOINTS\n", argv[0]);
    return 2;
  }
  const std::string urdf = read_file(argv[1]);
  const Run run = read_run(argv[2]);
  const auto waypoints = read_waypoints(argv[3], run.joints);
  const std::size_t n = run.joints.size();
  std::map<std::string, rclcpp::ParameterValue> yaml{
    {"joints", rclcpp::ParameterValue(run.joints)},
    {"controller", rclcpp::ParameterValue(std::string("computed_torque"))},
    {"state_timeout", rclcpp::ParameterValue(0.1)},
    {"kpp", rclcpp::ParameterValue(1.0)},  // misspelt in the file: warned about, ignored
  };
#ifndef ARMCTL_ROS_DISTRO_JAZZY
  yaml.emplace("robot_description", rclcpp::ParameterValue(urdf));  // Humble's way
#endif
  standin_is_strict();
  armctl_controllers::ModelBasedEffortController controller;
  check(controller.standin_init(urdf, yaml) == CallbackReturn::SUCCESS, "on_init");
  parameters_before_configure(controller, n);
  check(
    controller.on_configure(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "on_configure");
  configured_with_values_set_before(controller.get_node());
  const auto commands = controller.command_interface_configuration().names;
  const auto states = controller.state_interface_configuration().names;
  check(commands.size() == n && commands[0] == run.joints[0] + "/effort", "claims the efforts");
  check(states.size() == 2 * n, "reads positions and velocities");
  check(
    controller.on_activate(rclcpp_lifecycle::State()) == CallbackReturn::FAILURE,
    "activating without interfaces fails (and leaves it inactive, not finalized)");
  Hardware hardware(n);
  hardware.assign(controller, run.joints);
  check(controller.on_activate(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "on_activate");
  // A target in a frame the chain does not have: armctl refuses it in update(), naming the
  // frame and the known ones (the Panda's links, the world it is fixed in).
  geometry_msgs::msg::PoseStamped target;
  target.header.frame_id = "panda_hand";
  target.pose.orientation.w = 1.0;
  controller.get_node()->standin_deliver("~/target_pose", target);
  if (failures == 0) {
    replay(controller, hardware, run, waypoints);
    check(
      logged("target pose refused: frame 'panda_hand' is not a link of the chain (frames: world"),
      "a target pose in a frame off the chain is refused, naming the frames the URDF gives");
    parameters(controller, n);
    faults(controller, hardware, run.t.back() + 0.001);
    deactivate_and_clean_up(controller, hardware, urdf, run.joints);
    gains_set_before_configure_are_used(urdf, run);
  }
  std::printf("%s\n", failures == 0 ? "plugin on the stand-in: all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
