// Stand-in. Real: sensor_msgs/msg/joint_state.hpp, generated from sensor_msgs/msg/
// JointState.msg (ros2/common_interfaces); unchanged between Humble and Jazzy.
#ifndef SENSOR_MSGS__MSG__JOINT_STATE_HPP_
#define SENSOR_MSGS__MSG__JOINT_STATE_HPP_

#include <string>
#include <vector>

#include "std_msgs/msg/header.hpp"

namespace sensor_msgs
{
namespace msg
{
struct JointState
{
  std_msgs::msg::Header header;
  std::vector<std::string> name;
  std::vector<double> position;
  std::vector<double> velocity;
  std::vector<double> effort;
};
}  // namespace msg
}  // namespace sensor_msgs

#endif  // SENSOR_MSGS__MSG__JOINT_STATE_HPP_
