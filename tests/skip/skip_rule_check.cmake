# Each of planted_skips' test cases run alone, as ctest runs a discovered
# test. Every one reaches its skip and prints its reason, which is all a rule
# reading the output for a skip marker would look at; the exit status says
# otherwise: failed where the skip would hide an assertion, 77 only for a
# skip that comes first. Variables: PROGRAM.
function(expect name status)
  string(REPLACE "," "\\," spec "${name}")
  execute_process(COMMAND "${PROGRAM}" "${spec}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE result)
  set(said "${out}${err}")
  if(NOT said MATCHES "planted" AND NOT status EQUAL 0)
    message(FATAL_ERROR "\"${name}\" did not reach its skip:\n${said}")
  endif()
  if(status STREQUAL "failed")
    if(result EQUAL 0 OR result EQUAL 77)
      message(FATAL_ERROR "\"${name}\" must fail, but exited ${result}:\n${said}")
    endif()
  elseif(NOT result EQUAL status)
    message(FATAL_ERROR "\"${name}\" must exit ${status}, but exited ${result}:\n${said}")
  endif()
  message(STATUS "${name}: exit ${result}, as it must")
endfunction()

expect("a failed assertion, then a skip" failed)
expect("a passed assertion, then a skip" failed)
expect("a skip in one section, a failed assertion in another" failed)
expect("a failed assertion in one generated case, a skip in the next" failed)
expect("a skip in a fixture's constructor, and the test going on" failed)
expect("a skip before any assertion" 77)
expect("no skip" 0)
