# Passes when `PROGRAM SOURCE_DIR FOLDER`, given a FOLDER that holds no
# conformance suites, exits 1 and names the folder: a failure, neither a
# skip (77) nor a pass. Used for verdict_digest and stream_equivalence.
# Variables: PROGRAM, SOURCE_DIR, FOLDER.
execute_process(COMMAND "${PROGRAM}" "${SOURCE_DIR}" "${FOLDER}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
string(FIND "${out}" "conformance folder \"${FOLDER}\" has no json-schema-test-suite" named)
if(NOT result STREQUAL "1" OR named EQUAL -1)
  message(FATAL_ERROR "given a folder without the suites, ${PROGRAM} exited ${result} "
                      "(1 wanted, with a message naming ${FOLDER})")
endif()
message(STATUS "a folder without the suites fails, named")
