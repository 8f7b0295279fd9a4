// Stand-in. Real: hardware_interface/types/hardware_interface_type_values.hpp
// (ros-controls/ros2_control, read at ff8bff7e); the same four constants in Humble and Jazzy
// (Jazzy adds more, unused here).
#ifndef HARDWARE_INTERFACE__TYPES__HARDWARE_INTERFACE_TYPE_VALUES_HPP_
#define HARDWARE_INTERFACE__TYPES__HARDWARE_INTERFACE_TYPE_VALUES_HPP_

namespace hardware_interface
{
constexpr char HW_IF_POSITION[] = "position";
constexpr char HW_IF_VELOCITY[] = "velocity";
constexpr char HW_IF_ACCELERATION[] = "acceleration";
constexpr char HW_IF_EFFORT[] = "effort";
}  // namespace hardware_interface

#endif  // HARDWARE_INTERFACE__TYPES__HARDWARE_INTERFACE_TYPE_VALUES_HPP_
