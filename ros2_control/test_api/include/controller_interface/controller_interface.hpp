// Stand-in. Real: controller_interface/controller_interface.hpp (ros-controls/ros2_control).
// Humble: 2.x line, read at 03ae2b21. Jazzy: 4.x line, read at ca4d0f64. Both make the
// chained-mode methods final; the export_*_interfaces finals (whose types differ between the
// two) are left out, the plugin does not call them.
#ifndef CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_HPP_
#define CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_HPP_

#include "controller_interface/controller_interface_base.hpp"

namespace controller_interface
{
class ControllerInterface : public controller_interface::ControllerInterfaceBase
{
public:
  ControllerInterface() = default;
  virtual ~ControllerInterface() = default;

  bool is_chainable() const final { return false; }
  bool set_chained_mode(bool chained_mode) final { return !chained_mode; }
  bool is_in_chained_mode() const final { return false; }
};
}  // namespace controller_interface

#endif  // CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_HPP_
