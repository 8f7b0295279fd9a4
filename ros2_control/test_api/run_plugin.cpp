// Runs the plugin (armctl_controllers/ModelBasedEffortController) on the stand-in, as a
// controller manager would drive it, without ROS: init with the parameters of a controller
// YAML, configure, interfaces, activate, a JointTrajectory on ~/joint_trajectory, one update()
// per row of an `armctl sim` run (Panda, computed torque) with the run's states in the state
// interfaces, live parameters, bad states, deactivation, cleanup. It checks:
//  1. the effort interfaces get the run's efforts to 1e-9, row by row;
//  2. armctl's parameters are declared with descriptors, controller_node's own are not, and
//     `ros2 param set` is refused with armctl's reason or accepted and applied;
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

// 2: parameters.
void parameters(armctl_controllers::ModelBasedEffortController & controller, std::size_t n)
{
  auto node = controller.get_node();
  const auto * kp = node->standin_descriptor("kp");
  check(kp && !kp->description.empty() && !kp->read_only, "kp is declared with a description");
  const auto * safe_mode = node->standin_descriptor("safe_mode");
  check(
    safe_mode && safe_mode->additional_constraints == "one of: gravity, zero",
    "safe_mode's choices are in its descriptor");
  check(!node->has_parameter("update_rate"), "controller_node's update_rate is not declared");
  const auto * tip = node->standin_descriptor("tip_link");
  check(
    tip && tip->read_only && tip->description.rfind("Tip link of the chain", 0) == 0,
    "tip_link is declared read-only in on_init with armctl's description");
  check(
    node->standin_descriptor("effort_limits") && node->standin_descriptor("effort_limits")->read_only,
    "effort_limits is read-only");
  auto result = node->standin_set_parameters({doubles("kd", n, -1.0)});
  const std::string refusal = result.reason;
  check(
    !result.successful && refusal.find("parameter 'kd'") != std::string::npos,
    "a negative kd is refused with armctl's reason: " + refusal);
  // Refused as a batch: the valid kp must not stay behind on either handle.
  result = node->standin_set_parameters({doubles("kp", n, 100.0), doubles("kd", n, -1.0)});
  check(!result.successful, "a batch with a bad value is refused");
  check(
    node->get_parameter("kp").get_parameter_value().get<std::vector<double>>()[0] != 100.0,
    "the batch's valid kp was not applied");
  result = node->standin_set_parameters({doubles("kd", n, 30.0)});
  check(result.successful, "kd 30 accepted: " + result.reason);
  // Humble declares the YAML's names writable and allows new ones: the plugin refuses them.
  result = node->standin_set_parameters(
    {rclcpp::Parameter("joints", rclcpp::ParameterValue(std::vector<std::string>{"a"}))});
  check(!result.successful, "joints cannot change while configured: " + result.reason);
  result = node->standin_set_parameters({rclcpp::Parameter("kq", rclcpp::ParameterValue(1.0))});
  check(!result.successful, "an unknown name is refused: " + result.reason);
  result = node->standin_set_parameters(
    {rclcpp::Parameter("safe_mode", rclcpp::ParameterValue(std::string("coast")))});
  check(!result.successful, "an unknown safe_mode is refused: " + result.reason);
  std::printf(
    "parameters: declared with descriptors; kd -1 refused (%s); a batch with it refused whole; "
    "kd 30 accepted\n",
    refusal.c_str());
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
  std::printf("deactivation: gravity hold written (difference %.3e N m); cleaned up\n", largest);
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
  };
#ifndef ARMCTL_ROS_DISTRO_JAZZY
  yaml.emplace("robot_description", rclcpp::ParameterValue(urdf));  // Humble's way
#endif
  armctl_controllers::ModelBasedEffortController controller;
  check(controller.standin_init(urdf, yaml) == CallbackReturn::SUCCESS, "on_init");
  check(
    controller.on_configure(rclcpp_lifecycle::State()) == CallbackReturn::SUCCESS, "on_configure");
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
  }
  std::printf("%s\n", failures == 0 ? "plugin on the stand-in: all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
