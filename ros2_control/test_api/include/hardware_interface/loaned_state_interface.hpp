// Stand-in. Real: hardware_interface/loaned_state_interface.hpp (ros-controls/ros2_control).
// Humble (2.x line, read at 8befba39): double get_value() const. Jazzy (4.x line, read at
// 0ffaacc7, and a later stored copy whose commit the index did not name): double get_value()
// const, the later copy adding a [[nodiscard]] try-lock get_value(T &, unsigned int). The
// newest Jazzy-line command interface has get_optional() (see loaned_command_interface.hpp); the
// plugin uses get_optional() where an interface has it, get_value() otherwise.
#ifndef HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_
#define HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_

#include <string>

namespace hardware_interface
{
class LoanedStateInterface
{
public:
  LoanedStateInterface(const LoanedStateInterface &) = delete;
  LoanedStateInterface(LoanedStateInterface &&) = default;
  virtual ~LoanedStateInterface() = default;

  const std::string get_name() const { return name_; }
  const std::string & get_interface_name() const { return name_; }
  const std::string & get_prefix_name() const { return name_; }
  double get_value() const { return 0.0; }
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  template <typename T>
  [[nodiscard]] bool get_value(T & value, unsigned int max_tries = 10) const
  {
    (void)max_tries;
    value = T{};
    return true;
  }
#endif

private:
  std::string name_;
};
}  // namespace hardware_interface

#endif  // HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_
