# The C++20 flavour: the public headers compile as C++20 on tl-expected;
# llmdlq's core built with LLMDLQ_EXPECTED=tl as C++20,
# installed, then used by C++20 hosts through find_package and pkg-config.
# Built without transports, it also refuses a host that asks for one. A
# C++23 host built for std::expected fails to link against it, naming the
# v1_std_expected namespace.
# Variables: those of common.cmake, TL_EXPECTED_PREFIX.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
if(NOT EXISTS "${TL_EXPECTED_PREFIX}/include/tl/expected.hpp")
  message(FATAL_ERROR "no tl-expected in '${TL_EXPECTED_PREFIX}' (LLMDLQ_TL_EXPECTED_PREFIX)")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

# Every public header, the transports' included, is C++20 on tl-expected.
file(GLOB headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/llmdlq/*.hpp"
     "${SOURCE_DIR}/include/llmdlq/*/*.hpp")
list(FILTER headers EXCLUDE REGEX "^llmdlq/(detail|impl)/|^llmdlq/src\\.hpp$")
list(TRANSFORM headers REPLACE "(.+)" "#include <\\1>\n")
string(JOIN "" headers ${headers})
file(WRITE "${WORK_DIR}/headers.cpp" "${headers}")
llmdlq_run("${CXX_COMPILER}" ${llmdlq_cxx_flags} -std=c++20 -fsyntax-only -DLLMDLQ_USE_TL_EXPECTED
           "-I${SOURCE_DIR}/include" "-I${TL_EXPECTED_PREFIX}/include" "${WORK_DIR}/headers.cpp")

llmdlq_install_project("${WORK_DIR}/llmdlq" "${prefix}" -DLLMDLQ_EXPECTED=tl -DCMAKE_CXX_STANDARD=20
  "-DCMAKE_PREFIX_PATH=${TL_EXPECTED_PREFIX}" -DLLMDLQ_WITH_SQLITE=OFF -DLLMDLQ_WITH_KAFKA=OFF
  -DLLMDLQ_WITH_REDIS=OFF -DLLMDLQ_WITH_POSTGRES=OFF -DLLMDLQ_WITH_LLM=OFF)
file(READ "${WORK_DIR}/llmdlq/CMakeFiles/llmdlq_core.dir/flags.make" flags)
llmdlq_expect("${flags}" "-std=(c|gnu)\\+\\+20" "the library's flags")

# The hosts find tl-expected the way they find llmdlq.
set(ENV{CMAKE_PREFIX_PATH} "${TL_EXPECTED_PREFIX}")
llmdlq_consumer(consumer "${prefix}" -DCMAKE_CXX_STANDARD=20 -DCMAKE_CXX_STANDARD_REQUIRED=ON)
file(READ "${WORK_DIR}/consumer/CMakeFiles/core_consumer.dir/flags.make" flags)
llmdlq_expect("${flags}" "-std=(c|gnu)\\+\\+20" "the C++20 host's flags")
llmdlq_expect("${flags}" "LLMDLQ_USE_TL_EXPECTED" "the C++20 host's flags")

llmdlq_consumer_must_not_find(no_sqlite "${prefix}"
  "component 'sqlite' not found: this llmdlq was built with LLMDLQ_WITH_SQLITE=OFF" -DLLMDLQ_COMPONENTS=sqlite)

# pkg-config gives the host the flavour's definition and tl-expected's headers.
find_program(PKG_CONFIG NAMES pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs llmdlq OUTPUT_VARIABLE pc_flags
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
llmdlq_expect("${pc_flags}" "-DLLMDLQ_USE_TL_EXPECTED" "pkg-config --cflags llmdlq of the tl flavour")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
llmdlq_run("${CXX_COMPILER}" ${llmdlq_cxx_flags} -std=c++20 "${SOURCE_DIR}/tests/install/consumer/core.cpp"
           -o "${WORK_DIR}/pkg_config_consumer" ${pc_flags})
llmdlq_run("${WORK_DIR}/pkg_config_consumer")

# A std::expected host against this library.
list(FILTER pc_flags EXCLUDE REGEX "^-DLLMDLQ_USE_TL_EXPECTED$")
llmdlq_run_failing(out "${CXX_COMPILER}" ${llmdlq_cxx_flags} -std=c++23 "${SOURCE_DIR}/tests/install/consumer/core.cpp"
                   -o "${WORK_DIR}/mixed_consumer" ${pc_flags})
llmdlq_expect("${out}" "undefined reference to [^\n]*llmdlq::v1_std_expected::" "a std::expected host against the tl::expected library")
