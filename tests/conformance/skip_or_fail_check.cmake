# ctest reports a conformance test Skipped when no conformance folder is
# configured, and Failed when the folder lacks the suites, rather than Passed
# after running nothing. Runs ctest on the discovered JSONTestSuite test with
# LLMDLQ_CONFORMANCE_DIR set in the environment. Variables: CTEST, TEST_DIR,
# EMPTY_DIR.
cmake_minimum_required(VERSION 3.25)

function(expect_outcome folder outcome)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "LLMDLQ_CONFORMANCE_DIR=${folder}"
            "${CTEST}" --test-dir "${TEST_DIR}" -R "^JSONTestSuite test_parsing"
    OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT out MATCHES "Test +#[0-9]+: JSONTestSuite test_parsing[^\n]*${outcome}")
    message("${out}")
    message(FATAL_ERROR "with LLMDLQ_CONFORMANCE_DIR=\"${folder}\", ctest did not report the test ${outcome}")
  endif()
endfunction()

expect_outcome("" "Skipped")
expect_outcome("${EMPTY_DIR}" "Failed")
message(STATUS "no folder: Skipped; a folder without the suites: Failed")
