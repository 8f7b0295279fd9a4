// Stand-in. Real: rcl_interfaces/msg/set_parameters_result.hpp, generated from
// rcl_interfaces/msg/SetParametersResult.msg (ros2/rcl_interfaces); same in Humble and Jazzy.
#ifndef RCL_INTERFACES__MSG__SET_PARAMETERS_RESULT_HPP_
#define RCL_INTERFACES__MSG__SET_PARAMETERS_RESULT_HPP_

#include <string>

namespace rcl_interfaces
{
namespace msg
{
// Real: rcl_interfaces/msg/set_parameters_result.hpp (SetParametersResult.msg).
struct SetParametersResult
{
  bool successful = false;
  std::string reason;
};
}  // namespace msg
}  // namespace rcl_interfaces

#endif  // RCL_INTERFACES__MSG__SET_PARAMETERS_RESULT_HPP_
