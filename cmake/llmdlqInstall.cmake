# Install rules: headers, the libraries, and a config-file package so that
# find_package(llmdlq CONFIG) works for hosts.
include(CMakePackageConfigHelpers)

set(LLMDLQ_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/llmdlq")

install(DIRECTORY include/llmdlq DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES schemas/envelope-v1.json DESTINATION "${CMAKE_INSTALL_DATADIR}/llmdlq/schemas")
install(FILES "${PROJECT_BINARY_DIR}/include/llmdlq/version.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/llmdlq")
install(TARGETS llmdlq_core llmdlq_header_only ${LLMDLQ_INSTALL_EXTRA_TARGETS}
  EXPORT llmdlqTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(EXPORT llmdlqTargets NAMESPACE llmdlq:: DESTINATION "${LLMDLQ_CMAKE_DIR}")

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
  DESTINATION "${LLMDLQ_CMAKE_DIR}")
