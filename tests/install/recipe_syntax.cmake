# The vcpkg manifest is JSON, and the Conan recipe and its test package are
# Python that compiles (Conan itself is not imported).
# Variables: SOURCE_DIR, WORK_DIR, PYTHON.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
if(NOT PYTHON)
  message(FATAL_ERROR "no python3 given (PYTHON): the test is registered Skipped where it is missing")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
llmdlq_run("${PYTHON}" -m json.tool "${SOURCE_DIR}/ports/llmdlq/vcpkg.json" "${WORK_DIR}/vcpkg.json")
set(ENV{PYTHONPYCACHEPREFIX} "${WORK_DIR}/pycache")
llmdlq_run("${PYTHON}" -m py_compile "${SOURCE_DIR}/conanfile.py" "${SOURCE_DIR}/test_package/conanfile.py")
