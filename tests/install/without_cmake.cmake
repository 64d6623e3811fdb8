# Hosts that build without CMake, straight from the compiler:
#   header_only  -I include -DLLMDLQ_HEADER_ONLY on the source tree (every
#                header there, version.hpp included, is checked in)
#   single_tu    -I include and llmdlq/src.hpp in one translation unit, no
#                llmdlq library; src.hpp must include what src/*.cpp compile
#   pkg_config   pkg-config --cflags --libs llmdlq from the installed prefix
#   flavour_mix  a host built for tl::expected against the std::expected
#                library: the link fails, naming the v1_tl_expected namespace
# The core's own dependencies come from their pkg-config files.
# Variables: those of common.cmake, MODE, PREFIX, TL_EXPECTED_PREFIX.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

find_program(PKG_CONFIG NAMES pkg-config REQUIRED)
function(pkg_config out_var)
  execute_process(COMMAND "${PKG_CONFIG}" ${ARGN} OUTPUT_VARIABLE flags RESULT_VARIABLE result
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} failed: ${error}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out_var} ${flags} PARENT_SCOPE)
endfunction()
pkg_config(dependencies --cflags --libs simdjson fmt libpcre2-8 libcrypto)
list(APPEND dependencies -lboost_json -DPCRE2_CODE_UNIT_WIDTH=8)
set(compile "${CXX_COMPILER}" ${llmdlq_cxx_flags} -std=c++23)
set(program "${WORK_DIR}/program")

if(MODE STREQUAL "header_only")
  # The light headers only: their definitions are inline, so no library is linked.
  file(WRITE "${WORK_DIR}/main.cpp" [[
#include <cstdio>
#include <llmdlq/call_outcome.hpp>
#include <llmdlq/dlq_id.hpp>
#include <llmdlq/version.hpp>
int main() {
  const auto id = llmdlq::derive_dlq_id("an idempotency key", 1);
  std::printf("llmdlq %s header-only: %s\n", llmdlq::version_string, id.c_str());
  return id.empty() ? 1 : 0;
}
]])
  llmdlq_run(${compile} -DLLMDLQ_HEADER_ONLY "-I${SOURCE_DIR}/include" "${WORK_DIR}/main.cpp" -o "${program}"
             ${dependencies})
elseif(MODE STREQUAL "single_tu")
  file(GLOB sources "${SOURCE_DIR}/src/*.cpp")
  file(READ "${SOURCE_DIR}/include/llmdlq/src.hpp" src_hpp)
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^#include ")
    foreach(line IN LISTS includes)
      string(FIND "${src_hpp}" "${line}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "llmdlq/src.hpp lacks '${line}', which ${source} compiles")
      endif()
    endforeach()
  endforeach()
  file(WRITE "${WORK_DIR}/llmdlq.cpp" "#include <llmdlq/src.hpp>\n")
  llmdlq_run(${compile} "-I${SOURCE_DIR}/include" "${WORK_DIR}/llmdlq.cpp"
             "${SOURCE_DIR}/tests/install/consumer/core.cpp" -o "${program}" ${dependencies})
elseif(MODE STREQUAL "pkg_config")
  set(ENV{PKG_CONFIG_PATH} "${PREFIX}/lib/pkgconfig")
  pkg_config(llmdlq --cflags --libs llmdlq)
  llmdlq_run(${compile} "${SOURCE_DIR}/tests/install/consumer/core.cpp" -o "${program}" ${llmdlq})
elseif(MODE STREQUAL "flavour_mix")
  if(NOT EXISTS "${TL_EXPECTED_PREFIX}/include/tl/expected.hpp")
    message(FATAL_ERROR "no tl-expected in '${TL_EXPECTED_PREFIX}' (LLMDLQ_TL_EXPECTED_PREFIX)")
  endif()
  llmdlq_run_failing(out ${compile} -DLLMDLQ_USE_TL_EXPECTED "-I${TL_EXPECTED_PREFIX}/include" "-I${PREFIX}/include"
                     "${SOURCE_DIR}/tests/install/consumer/core.cpp" -o "${program}" "-L${PREFIX}/lib" -lllmdlq
                     ${dependencies})
  llmdlq_expect("${out}" "undefined reference to [^\n]*llmdlq::v1_tl_expected::" "a tl::expected host against the std::expected library")
  return()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
llmdlq_run("${program}")
