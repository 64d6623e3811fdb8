# A README program prints exactly what the README says it prints: runs
# PROGRAM and compares its standard output, byte for byte, with the file
# EXPECTED (the program's "It prints:" block). Variables: PROGRAM, EXPECTED.
cmake_minimum_required(VERSION 3.25)
get_filename_component(name "${PROGRAM}" NAME)
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE result OUTPUT_VARIABLE actual)
file(READ "${EXPECTED}" expected)
if(NOT result EQUAL 0)
  message("${actual}")
  message(FATAL_ERROR "${name} failed (${result})")
endif()
if(NOT actual STREQUAL expected)
  message("It prints:\n${actual}\nREADME.md says:\n${expected}")
  message(FATAL_ERROR "${name} does not print what README.md says")
endif()
message(STATUS "${name} prints what README.md says")
