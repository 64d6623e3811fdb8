# Installs the built project into PREFIX, for the tests that use it.
# Variables: BUILD_DIR, PREFIX.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" COMMAND_ERROR_IS_FATAL ANY
                OUTPUT_QUIET)
