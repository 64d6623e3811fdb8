# A program on a page of the manual prints exactly what the page says it
# prints: runs PROGRAM and compares its standard output, byte for byte, with
# the file EXPECTED (the program's "It prints:" block). Variables: PROGRAM,
# EXPECTED; the page's name is read from EXPECTED's sibling NAME.page.
cmake_minimum_required(VERSION 3.25)
get_filename_component(name "${PROGRAM}" NAME)
string(REGEX REPLACE "\\.expected$" ".page" page_file "${EXPECTED}")
set(page "its page")
if(EXISTS "${page_file}")
  file(READ "${page_file}" page)
endif()
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE result OUTPUT_VARIABLE actual)
file(READ "${EXPECTED}" expected)
if(NOT result EQUAL 0)
  message("${actual}")
  message(FATAL_ERROR "${name} failed (${result})")
endif()
if(NOT actual STREQUAL expected)
  message("It prints:\n${actual}\n${page} says:\n${expected}")
  message(FATAL_ERROR "${name} does not print what ${page} says")
endif()
message(STATUS "${name} prints what ${page} says")
