// Stand-in. Real: trajectory_msgs/msg/joint_trajectory.hpp, generated from
// trajectory_msgs/msg/JointTrajectory.msg and JointTrajectoryPoint.msg (ros2/common_interfaces;
// JointTrajectoryPoint.msg read at 14c2783a); unchanged between Humble and Jazzy.
#ifndef TRAJECTORY_MSGS__MSG__JOINT_TRAJECTORY_HPP_
#define TRAJECTORY_MSGS__MSG__JOINT_TRAJECTORY_HPP_

#include <string>
#include <vector>

#include "std_msgs/msg/header.hpp"

namespace trajectory_msgs
{
namespace msg
{
// Real: trajectory_msgs/msg/joint_trajectory_point.hpp (JointTrajectoryPoint.msg).
struct JointTrajectoryPoint
{
  std::vector<double> positions;
  std::vector<double> velocities;
  std::vector<double> accelerations;
  std::vector<double> effort;
  builtin_interfaces::msg::Duration time_from_start;
};

// Real: trajectory_msgs/msg/joint_trajectory.hpp (JointTrajectory.msg).
struct JointTrajectory
{
  std_msgs::msg::Header header;
  std::vector<std::string> joint_names;
  std::vector<JointTrajectoryPoint> points;
};
}  // namespace msg
}  // namespace trajectory_msgs

#endif  // TRAJECTORY_MSGS__MSG__JOINT_TRAJECTORY_HPP_
