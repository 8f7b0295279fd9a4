// Stand-in. Real: geometry_msgs/msg/pose_stamped.hpp, generated from geometry_msgs/msg/
// PoseStamped.msg, Pose.msg, Point.msg, Quaternion.msg (ros2/common_interfaces); unchanged
// between Humble and Jazzy.
#ifndef GEOMETRY_MSGS__MSG__POSE_STAMPED_HPP_
#define GEOMETRY_MSGS__MSG__POSE_STAMPED_HPP_

#include "std_msgs/msg/header.hpp"

namespace geometry_msgs
{
namespace msg
{
// Real: geometry_msgs/msg/point.hpp (Point.msg).
struct Point
{
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;
};

// Real: geometry_msgs/msg/quaternion.hpp (Quaternion.msg: w defaults to 1).
struct Quaternion
{
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;
  double w = 1.0;
};

// Real: geometry_msgs/msg/pose.hpp (Pose.msg).
struct Pose
{
  Point position;
  Quaternion orientation;
};

// Real: geometry_msgs/msg/pose_stamped.hpp (PoseStamped.msg).
struct PoseStamped
{
  std_msgs::msg::Header header;
  Pose pose;
};
}  // namespace msg
}  // namespace geometry_msgs

#endif  // GEOMETRY_MSGS__MSG__POSE_STAMPED_HPP_
