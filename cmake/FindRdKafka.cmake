# Finds librdkafka (the C client) and defines the imported target RdKafka::rdkafka.
find_path(RdKafka_INCLUDE_DIR NAMES librdkafka/rdkafka.h)
find_library(RdKafka_LIBRARY NAMES rdkafka)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RdKafka REQUIRED_VARS RdKafka_LIBRARY RdKafka_INCLUDE_DIR)

if(RdKafka_FOUND AND NOT TARGET RdKafka::rdkafka)
  add_library(RdKafka::rdkafka UNKNOWN IMPORTED)
  set_target_properties(RdKafka::rdkafka PROPERTIES
    IMPORTED_LOCATION "${RdKafka_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${RdKafka_INCLUDE_DIR}")
endif()
mark_as_advanced(RdKafka_INCLUDE_DIR RdKafka_LIBRARY)
