# The verdicts of every corpus are those digests.txt holds. Variables:
# PROGRAM, SOURCE_DIR, CONFORMANCE_DIR, EXPECTED.
execute_process(COMMAND "${PROGRAM}" "${SOURCE_DIR}" "${CONFORMANCE_DIR}"
                OUTPUT_VARIABLE actual RESULT_VARIABLE result)
if(result EQUAL 77)
  message(STATUS "LLMDLQ_SKIPPED: no conformance folder")
  return()
endif()
if(NOT result EQUAL 0)
  message(FATAL_ERROR "verdict_digest failed (${result})")
endif()
file(READ "${EXPECTED}" expected)
if(NOT actual STREQUAL expected)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/verdict_digests.actual" "${actual}")
  message(FATAL_ERROR "the verdicts changed; the digests now are:\n${actual}\n"
          "(`verdict_digest SOURCE CONFORMANCE --each` at both commits shows which texts changed)")
endif()
message(STATUS "every corpus's verdicts are unchanged")
