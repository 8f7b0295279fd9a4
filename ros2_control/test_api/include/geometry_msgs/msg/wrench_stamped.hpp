// Stand-in. Real: geometry_msgs/msg/wrench_stamped.hpp, generated from geometry_msgs/msg/
// WrenchStamped.msg, Wrench.msg, Vector3.msg (ros2/common_interfaces); unchanged between Humble
// and Jazzy.
#ifndef GEOMETRY_MSGS__MSG__WRENCH_STAMPED_HPP_
#define GEOMETRY_MSGS__MSG__WRENCH_STAMPED_HPP_

#include "std_msgs/msg/header.hpp"

namespace geometry_msgs
{
namespace msg
{
// Real: geometry_msgs/msg/vector3.hpp (Vector3.msg).
struct Vector3
{
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;
};

// Real: geometry_msgs/msg/wrench.hpp (Wrench.msg).
struct Wrench
{
  Vector3 force;
  Vector3 torque;
};

// Real: geometry_msgs/msg/wrench_stamped.hpp (WrenchStamped.msg).
struct WrenchStamped
{
  std_msgs::msg::Header header;
  Wrench wrench;
};
}  // namespace msg
}  // namespace geometry_msgs

#endif  // GEOMETRY_MSGS__MSG__WRENCH_STAMPED_HPP_
