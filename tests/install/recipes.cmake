# The vcpkg port and the Conan recipe build llmdlq with these options: for
# each the default feature/option set and the full one, the project is
# configured with exactly the options the port (ports/llmdlq/options.cmake
# and vcpkg.json's features, as vcpkg_check_features passes them) or the
# recipe's generate() (tests/install/conan_options.py) gives, built,
# installed, and test_package/ is built against the installed prefix and run.
# Sets that coincide are built once, and a set whose libraries are this
# build's (the full ones) uses this build's install.
# Variables: those of common.cmake, VERSION (the project's), PYTHON.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
if(NOT PYTHON)
  message(FATAL_ERROR "no python3 given (PYTHON): the test is registered Skipped where it is missing")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")

# vcpkg: the version, the features and their options.
file(READ "${SOURCE_DIR}/ports/llmdlq/vcpkg.json" manifest)
string(JSON port_version GET "${manifest}" version)
if(NOT port_version STREQUAL VERSION)
  message(FATAL_ERROR "ports/llmdlq/vcpkg.json has version ${port_version}, llmdlq/version.hpp ${VERSION}")
endif()
include("${SOURCE_DIR}/ports/llmdlq/options.cmake")
set(port_features)
set(feature_options ${LLMDLQ_PORT_FEATURES})
while(feature_options)
  list(POP_FRONT feature_options feature option)
  list(APPEND port_features ${feature})
endwhile()
set(manifest_features)
string(JSON count LENGTH "${manifest}" features)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON feature MEMBER "${manifest}" features ${i})
  list(APPEND manifest_features ${feature})
endforeach()
list(SORT port_features)
list(SORT manifest_features)
if(NOT port_features STREQUAL manifest_features)
  message(FATAL_ERROR "vcpkg.json's features (${manifest_features}) are not options.cmake's (${port_features})")
endif()
set(default_features)
string(JSON count LENGTH "${manifest}" default-features)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON feature GET "${manifest}" default-features ${i})
  list(APPEND default_features ${feature})
endforeach()

# vcpkg_port_options(out features...): what the portfile passes when those
# features are selected.
function(vcpkg_port_options out)
  set(options ${LLMDLQ_PORT_OPTIONS})
  set(pairs ${LLMDLQ_PORT_FEATURES})
  while(pairs)
    list(POP_FRONT pairs feature option)
    if(feature IN_LIST ARGN)
      list(APPEND options -D${option}=ON)
    else()
      list(APPEND options -D${option}=OFF)
    endif()
  endwhile()
  list(SORT options)
  set(${out} "${options}" PARENT_SCOPE)
endfunction()
vcpkg_port_options(vcpkg_default ${default_features})
vcpkg_port_options(vcpkg_full ${manifest_features})

# Conan: what generate() sets.
execute_process(COMMAND "${PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/conan_options.py" "${SOURCE_DIR}/conanfile.py"
                OUTPUT_VARIABLE conan RESULT_VARIABLE result ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "conan_options.py: ${error}")
endif()
string(REGEX MATCH "default: ([^\n]*)" _ "${conan}")
set(conan_default "${CMAKE_MATCH_1}")
string(REGEX MATCH "full: ([^\n]*)" _ "${conan}")
set(conan_full "${CMAKE_MATCH_1}")

# The distinct sets, the lighter first.
set(sets)
foreach(name vcpkg_default conan_default vcpkg_full conan_full)
  list(SORT ${name})
  string(REPLACE ";" " " options "${${name}}")
  if(NOT options IN_LIST sets)
    list(APPEND sets "${options}")
  endif()
  list(FIND sets "${options}" index)
  list(APPEND users_${index} ${name})
endforeach()

# built_transports(out config): the components an llmdlqConfig.cmake offers.
function(built_transports out config)
  file(STRINGS "${config}" line REGEX "^set\\(_llmdlq_built ")
  string(REGEX REPLACE "^set\\(_llmdlq_built \"([^\"]*)\"\\)$" "\\1" built "${line}")
  set(${out} "${built}" PARENT_SCOPE)
endfunction()
# The libraries this build installed into PREFIX (install_prefix) are those
# of any set that builds the same transports in the same flavour: such a set
# is configured with its options, and its test_package built against PREFIX,
# instead of compiling the same sources a second time.
built_transports(this_build "${PREFIX}/lib/cmake/llmdlq/llmdlqConfig.cmake")

set(index 0)
foreach(options IN LISTS sets)
  message(STATUS "${users_${index}}: ${options}")
  separate_arguments(options UNIX_COMMAND "${options}")
  set(prefix "${WORK_DIR}/prefix_${index}")
  llmdlq_configure("${SOURCE_DIR}" "${WORK_DIR}/llmdlq" ${options})
  built_transports(transports "${WORK_DIR}/llmdlq/llmdlqConfig.cmake")
  if(transports STREQUAL this_build)
    message(STATUS "the libraries of this build (${transports}), installed in ${PREFIX}")
    set(prefix "${PREFIX}")
  else()
    llmdlq_build("${WORK_DIR}/llmdlq")
    llmdlq_run("${CMAKE_COMMAND}" --install "${WORK_DIR}/llmdlq" --prefix "${prefix}")
  endif()
  llmdlq_configure("${SOURCE_DIR}/test_package" "${WORK_DIR}/test_package_${index}" "-DCMAKE_PREFIX_PATH=${prefix}")
  llmdlq_build("${WORK_DIR}/test_package_${index}")
  llmdlq_run("${WORK_DIR}/test_package_${index}/test_package" WORKING_DIRECTORY "${WORK_DIR}/test_package_${index}")
  # A package built without Kafka has no kafka component.
  if("-DLLMDLQ_WITH_KAFKA=OFF" IN_LIST options)
    llmdlq_consumer_must_not_find(no_kafka_${index} "${prefix}"
      "component 'kafka' not found: this llmdlq was built with LLMDLQ_WITH_KAFKA=OFF" -DLLMDLQ_COMPONENTS=kafka)
  endif()
  math(EXPR index "${index} + 1")
endforeach()
