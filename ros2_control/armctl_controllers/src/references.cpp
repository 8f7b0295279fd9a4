// The references: joint trajectory, target pose and external wrench, taken by the subscriber
// callbacks and applied to armctl by update().
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "armctl_controllers/model_based_effort_controller.hpp"
#include "conversions.hpp"

namespace armctl_controllers
{
using detail::to_controller_order;

namespace
{
// Refuses at once what no armctl controller would read (so far the largest
// max_reference_points); armctl checks its own limit after.
constexpr std::size_t kMaxTrajectoryPoints = 1000000;

// As controller_node: a pose target is reached in this time (s).
constexpr double kTargetPoseDuration = 1.0;
}  // namespace

void ModelBasedEffortController::on_trajectory(const trajectory_msgs::msg::JointTrajectory & msg)
{
  auto logger = get_node()->get_logger();
  if (!active_) {
    RCLCPP_WARN(logger, "joint trajectory ignored: the controller is not active");
    return;
  }
  if (msg.points.size() > kMaxTrajectoryPoints) {
    RCLCPP_WARN(
      logger, "joint trajectory refused: %zu points (at most %zu)", msg.points.size(),
      kMaxTrajectoryPoints);
    return;
  }
  std::string why;
  auto pending = to_controller_order(msg, joints_, why);
  if (!pending) {
    RCLCPP_WARN(logger, "joint trajectory refused: %s", why.c_str());
    return;
  }
  pending->sequence = ++trajectory_sequence_;
  trajectory_buffer_.writeFromNonRT(std::move(pending));
}

// armctl places the frame (a link of the chain, with the model's kinematics) in update(); here
// the name is only copied into a fixed array, refused when it does not fit (said once per
// frame, not per message: a wrench may come at 1 kHz).
bool ModelBasedEffortController::copy_frame(
  const std::string & frame_id, FrameName & frame, const char * what)
{
  if (frame_id.size() < frame.size()) {
    std::memcpy(frame.data(), frame_id.c_str(), frame_id.size() + 1);
    return true;
  }
  if (frame_id != refused_frame_) {
    refused_frame_ = frame_id;
    RCLCPP_WARN(
      get_node()->get_logger(), "%s refused: frame name of %zu characters is too long", what,
      frame_id.size());
  }
  return false;
}

void ModelBasedEffortController::on_target_pose(const geometry_msgs::msg::PoseStamped & msg)
{
  PendingPose pose;
  if (!active_ || !copy_frame(msg.header.frame_id, pose.frame, "target pose")) {
    return;
  }
  const auto & p = msg.pose.position;
  const auto & q = msg.pose.orientation;
  pose.sequence = ++pose_sequence_;
  pose.position = {p.x, p.y, p.z};
  pose.orientation = {q.x, q.y, q.z, q.w};
  pose_buffer_.writeFromNonRT(pose);
}

void ModelBasedEffortController::on_wrench(const geometry_msgs::msg::WrenchStamped & msg)
{
  PendingWrench wrench;
  if (!active_ || !copy_frame(msg.header.frame_id, wrench.frame, "external wrench")) {
    return;
  }
  const auto & f = msg.wrench.force;
  const auto & t = msg.wrench.torque;
  wrench.sequence = ++wrench_sequence_;
  wrench.wrench = {f.x, f.y, f.z, t.x, t.y, t.z};
  wrench_buffer_.writeFromNonRT(wrench);
}

void ModelBasedEffortController::apply_references(double now)
{
  const auto & trajectory = *trajectory_buffer_.readFromRT();
  if (trajectory && trajectory->sequence != applied_trajectory_) {
    applied_trajectory_ = trajectory->sequence;
    const double start = trajectory->stamp > 0.0 ? trajectory->stamp : now;
    const ArmctlStatus s = armctl_set_trajectory(
      handle_, trajectory->points.data(), trajectory->points.size(), start, now);
    if (s != ARMCTL_STATUS_OK) {
      log_.push(true, "joint trajectory refused: ", armctl_last_error(handle_));
    }
  }
  const PendingPose & pose = *pose_buffer_.readFromRT();
  if (pose.sequence != applied_pose_) {
    applied_pose_ = pose.sequence;
    const ArmctlStatus s = armctl_set_target_pose_in(
      handle_, pose.frame.data(), pose.position.data(), pose.orientation.data(),
      kTargetPoseDuration);
    if (s != ARMCTL_STATUS_OK) {
      log_.push(true, "target pose refused: ", armctl_last_error(handle_));
    }
  }
  const PendingWrench & wrench = *wrench_buffer_.readFromRT();
  if (wrench.sequence != applied_wrench_) {
    applied_wrench_ = wrench.sequence;
    const ArmctlStatus s =
      armctl_set_external_wrench_in(handle_, wrench.frame.data(), wrench.wrench.data());
    // Said once per frame: a wrench may come at 1 kHz.
    if (s != ARMCTL_STATUS_OK) {
      if (std::strncmp(wrench.frame.data(), refused_wrench_frame_.data(), sizeof(FrameName))) {
        refused_wrench_frame_ = wrench.frame;
        log_.push(true, "external wrench refused: ", armctl_last_error(handle_));
      }
    } else {
      refused_wrench_frame_[0] = '\0';
    }
  }
}
}  // namespace armctl_controllers
