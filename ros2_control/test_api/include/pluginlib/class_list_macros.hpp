// Stand-in. Real: pluginlib/class_list_macros.hpp (ros/pluginlib), where
// PLUGINLIB_EXPORT_CLASS(class_type, base_class_type) registers the class with class_loader;
// same macro in Humble and Jazzy. Here it only checks the class derives from the base.
#ifndef PLUGINLIB__CLASS_LIST_MACROS_HPP_
#define PLUGINLIB__CLASS_LIST_MACROS_HPP_

#include <type_traits>

#define PLUGINLIB_EXPORT_CLASS(class_type, base_class_type) \
  static_assert( \
    std::is_base_of<base_class_type, class_type>::value, \
    "PLUGINLIB_EXPORT_CLASS: the class must derive from its base class");

#endif  // PLUGINLIB__CLASS_LIST_MACROS_HPP_
