// Stand-in. Real: std_msgs/msg/header.hpp (std_msgs/msg/Header.msg, ros2/common_interfaces) and
// builtin_interfaces/msg/time.hpp, duration.hpp (ros2/rcl_interfaces, builtin_interfaces/msg/
// Time.msg, Duration.msg); unchanged between Humble and Jazzy.
#ifndef STD_MSGS__MSG__HEADER_HPP_
#define STD_MSGS__MSG__HEADER_HPP_

#include <cstdint>
#include <string>

namespace builtin_interfaces
{
namespace msg
{
// Real: builtin_interfaces/msg/time.hpp (Time.msg).
struct Time
{
  int32_t sec = 0;
  uint32_t nanosec = 0;
};

// Real: builtin_interfaces/msg/duration.hpp (Duration.msg).
struct Duration
{
  int32_t sec = 0;
  uint32_t nanosec = 0;
};
}  // namespace msg
}  // namespace builtin_interfaces

namespace std_msgs
{
namespace msg
{
// Real: std_msgs/msg/header.hpp (Header.msg).
struct Header
{
  builtin_interfaces::msg::Time stamp;
  std::string frame_id;
};
}  // namespace msg
}  // namespace std_msgs

#endif  // STD_MSGS__MSG__HEADER_HPP_
