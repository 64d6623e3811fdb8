# A host that adds llmdlq's source tree with add_subdirectory or
# FetchContent (SOURCE_DIR, no network) gets the libraries only: no tests,
# tools, examples, benchmarks, fuzzers or install rules. With
# MODE=fetch_content the host's program is built on llmdlq::header_only,
# which spares the test a build of the compiled core (the project's own
# build is one, through the same targets); add_subdirectory is only
# configured, the build being the same.
# Variables: those of common.cmake, MODE (add_subdirectory | fetch_content).
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/host")

if(MODE STREQUAL "add_subdirectory")
  set(add_llmdlq "add_subdirectory(\"${SOURCE_DIR}\" llmdlq)")
else()
  set(add_llmdlq "include(FetchContent)
FetchContent_Declare(llmdlq SOURCE_DIR \"${SOURCE_DIR}\")
FetchContent_MakeAvailable(llmdlq)")
endif()
file(WRITE "${WORK_DIR}/host/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(llmdlq_host LANGUAGES CXX)
${add_llmdlq}
add_executable(host \"${SOURCE_DIR}/tests/install/consumer/core.cpp\")
target_link_libraries(host PRIVATE llmdlq::header_only)
")
# Only the core: the transports would be built the same way.
llmdlq_configure("${WORK_DIR}/host" "${WORK_DIR}/build" -DLLMDLQ_WITH_SQLITE=OFF -DLLMDLQ_WITH_KAFKA=OFF
                 -DLLMDLQ_WITH_REDIS=OFF -DLLMDLQ_WITH_POSTGRES=OFF -DLLMDLQ_WITH_LLM=OFF)

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --target help
                OUTPUT_VARIABLE targets COMMAND_ERROR_IS_FATAL ANY)
llmdlq_expect("${targets}" "llmdlq_core" "the host's targets")
foreach(target unit_tests conformance_tests llmdlq_tool check_receipts ocr_worker fuzz_schema)
  if(targets MATCHES "\\.\\.\\. ${target}( |\n)")
    message(FATAL_ERROR "a host that adds llmdlq with ${MODE} gets the target ${target}:\n${targets}")
  endif()
endforeach()
file(READ "${WORK_DIR}/build/CMakeCache.txt" cache)
foreach(option TESTS TOOLS EXAMPLES BENCHMARKS FUZZERS)
  llmdlq_expect("${cache}" "LLMDLQ_BUILD_${option}:BOOL=OFF" "LLMDLQ_BUILD_${option} of a host")
endforeach()
llmdlq_expect("${cache}" "LLMDLQ_INSTALL:BOOL=OFF" "LLMDLQ_INSTALL of a host")

if(MODE STREQUAL "fetch_content")
  llmdlq_build("${WORK_DIR}/build" host)
  llmdlq_run("${WORK_DIR}/build/host")
endif()
