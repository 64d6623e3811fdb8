# Shared by the install tests (cmake -P scripts). Every script gets
# SOURCE_DIR, WORK_DIR (its own scratch folder), CXX_COMPILER, CXX_FLAGS and
# LAUNCHER (the build's compiler launcher, may be empty).
cmake_minimum_required(VERSION 3.25)

# llmdlq_run(command...): runs it; a failure fails the test with its output.
function(llmdlq_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${result}): ${command}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

# llmdlq_run_failing(out_var command...): runs it, which must fail; returns its output.
function(llmdlq_run_failing out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "succeeded but must fail: ${command}\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# llmdlq_expect(text regex what): fails the test unless text matches regex.
function(llmdlq_expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected output matching '${regex}', got:\n${text}")
  endif()
endfunction()

# The same compiler and flags as the build under test (sanitizers included),
# without a build type: these builds only have to compile and link.
separate_arguments(llmdlq_cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
set(llmdlq_cmake_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")

# llmdlq_configure(source binary args...), llmdlq_build(binary [targets...]).
function(llmdlq_configure source binary)
  llmdlq_run("${CMAKE_COMMAND}" -S "${source}" -B "${binary}" ${llmdlq_cmake_args} ${ARGN})
endfunction()
function(llmdlq_build binary)
  set(targets)
  if(ARGN)
    set(targets --target ${ARGN})
  endif()
  llmdlq_run("${CMAKE_COMMAND}" --build "${binary}" -j 2 ${targets})
endfunction()

# llmdlq_consumer(name prefix args...): configures and builds
# tests/install/consumer against the llmdlq installed in prefix, then runs
# each program it built.
function(llmdlq_consumer name prefix)
  set(binary "${WORK_DIR}/${name}")
  llmdlq_configure("${SOURCE_DIR}/tests/install/consumer" "${binary}" "-DCMAKE_PREFIX_PATH=${prefix}" ${ARGN})
  llmdlq_build("${binary}")
  file(GLOB programs "${binary}/*_consumer")
  if(NOT programs)
    message(FATAL_ERROR "${name}: no program was built")
  endif()
  foreach(program IN LISTS programs)
    execute_process(COMMAND "${program}" WORKING_DIRECTORY "${binary}" RESULT_VARIABLE result
                    OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "${program} failed (${result}):\n${out}")
    endif()
    message(STATUS "${out}")
  endforeach()
endfunction()

# llmdlq_consumer_must_not_find(name prefix regex args...): configuring the
# consumer fails, with find_package(llmdlq)'s message matching regex.
function(llmdlq_consumer_must_not_find name prefix regex)
  llmdlq_run_failing(out "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/${name}"
    ${llmdlq_cmake_args} "-DCMAKE_PREFIX_PATH=${prefix}" ${ARGN})
  string(REGEX REPLACE "[ \n]+" " " out "${out}")  # CMake wraps the message
  llmdlq_expect("${out}" "${regex}" "${name}")
endfunction()

# llmdlq_install_project(binary prefix args...): configures llmdlq's own
# source with args (tests, tools and examples off), builds its libraries and
# installs them into prefix.
function(llmdlq_install_project binary prefix)
  llmdlq_configure("${SOURCE_DIR}" "${binary}" -DLLMDLQ_BUILD_TESTS=OFF -DLLMDLQ_BUILD_TOOLS=OFF
    -DLLMDLQ_BUILD_EXAMPLES=OFF ${ARGN})
  llmdlq_build("${binary}")
  llmdlq_run("${CMAKE_COMMAND}" --install "${binary}" --prefix "${prefix}")
endfunction()
