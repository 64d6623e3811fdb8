# Install rules: the headers of the libraries built, the libraries, a
# config-file package with one component per transport (and stores), and
# llmdlq.pc.
include(CMakePackageConfigHelpers)

set(LLMDLQ_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/llmdlq")

# The core's headers, then each built component's folder: a host never sees
# the header of a library that is not there.
set(transport_folders ${LLMDLQ_COMPONENTS})
list(JOIN transport_folders "|" transport_folders)
install(DIRECTORY include/llmdlq DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  REGEX "/include/llmdlq/(${transport_folders})$" EXCLUDE)
install(FILES schemas/envelope-v1.json schemas/export-v1.json DESTINATION "${CMAKE_INSTALL_DATADIR}/llmdlq/schemas")

install(TARGETS llmdlq_core llmdlq_header_only
  EXPORT llmdlqTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(EXPORT llmdlqTargets NAMESPACE llmdlq:: DESTINATION "${LLMDLQ_CMAKE_DIR}")

# Each component in its own targets file, which the config file loads only
# when the host names the component (stores: with the transports it links).
foreach(transport IN LISTS LLMDLQ_BUILT_COMPONENTS)
  install(DIRECTORY include/llmdlq/${transport} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/llmdlq")
  string(SUBSTRING ${transport} 0 1 initial)
  string(TOUPPER ${initial} initial)
  string(SUBSTRING ${transport} 1 -1 rest)
  install(TARGETS llmdlq_${transport}
    EXPORT llmdlq${initial}${rest}Targets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(EXPORT llmdlq${initial}${rest}Targets NAMESPACE llmdlq:: DESTINATION "${LLMDLQ_CMAKE_DIR}")
endforeach()

get_target_property(LLMDLQ_CORE_TYPE llmdlq_core TYPE)
configure_package_config_file(cmake/llmdlqConfig.cmake.in
  "${PROJECT_BINARY_DIR}/llmdlqConfig.cmake"
  INSTALL_DESTINATION "${LLMDLQ_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/llmdlqConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/llmdlqConfig.cmake"
  "${PROJECT_BINARY_DIR}/llmdlqConfigVersion.cmake"
  cmake/llmdlqDependencies.cmake
  cmake/FindPCRE2.cmake
  cmake/FindRdKafka.cmake
  cmake/FindHiredis.cmake
  cmake/FindSodium.cmake
  DESTINATION "${LLMDLQ_CMAKE_DIR}")

include(llmdlqPkgConfig)
