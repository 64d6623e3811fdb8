# Compiles every public header alone, with the compiled library's settings
# and, where it has definitions to pull in, header-only; and checks that the light headers stay light:
# only the headers in HEAVY may reach simdjson or the schema engine.
# Variables: SOURCE_DIR, WORK_DIR, CXX_COMPILER, CXX_COMPILER_ID, STD_FLAG,
# DEFINES (;-list of -D and -I flags), TRANSPORTS (;-list of header folders built).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(HEAVY llmdlq.hpp json_parser.hpp schema.hpp process.hpp process_config.hpp pipeline.hpp content_check.hpp
          coerce.hpp typed.hpp typed_pipeline.hpp llm/recovery_ladder.hpp llm/schema_relaxation.hpp llm/evaluator.hpp
          stream_judge.hpp chat_stream.hpp judged_stream.hpp typed_partial.hpp tool_registry.hpp tool_call.hpp
          judged_tool_stream.hpp)

file(GLOB headers RELATIVE "${SOURCE_DIR}/include/llmdlq" "${SOURCE_DIR}/include/llmdlq/*.hpp")
# src.hpp is the compiled library in one file, for one source file of a host
# (tests/install compiles it), not a header to use llmdlq with.
list(REMOVE_ITEM headers src.hpp)
foreach(folder IN LISTS TRANSPORTS)
  file(GLOB more RELATIVE "${SOURCE_DIR}/include/llmdlq" "${SOURCE_DIR}/include/llmdlq/${folder}/*.hpp")
  list(APPEND headers ${more})
endforeach()
list(LENGTH headers count)
if(count LESS 20)
  message(FATAL_ERROR "only ${count} public headers found under ${SOURCE_DIR}/include/llmdlq")
endif()

# The header-only pass checks what a header and the definitions it pulls in
# include of llmdlq's own; whether the definitions include the libraries
# they use is checked by the library's build, which compiles each alone. So
# that pass reads those libraries from one precompiled header (GCC), instead
# of parsing simdjson, Boost.JSON and fmt again for each header.
set(header_only_flags -DLLMDLQ_HEADER_ONLY)
if(CXX_COMPILER_ID STREQUAL "GNU")
  set(third_party "${WORK_DIR}/third_party.hpp")
  file(WRITE "${third_party}" "#include <simdjson.h>\n#include <boost/describe.hpp>\n#include <boost/json.hpp>\n"
                              "#include <boost/json/basic_parser_impl.hpp>\n#include <boost/mp11/algorithm.hpp>\n"
                              "#include <fmt/format.h>\n")
  execute_process(COMMAND "${CXX_COMPILER}" ${STD_FLAG} -Wall -Wextra -Werror ${DEFINES} -DLLMDLQ_HEADER_ONLY
                          -x c++-header "${third_party}" -o "${third_party}.gch"
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "cannot precompile the libraries the headers use:\n${out}")
  endif()
  list(APPEND header_only_flags -include "${third_party}" -Winvalid-pch)
endif()

set(failures)
foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${header}" id)
  set(tu "${WORK_DIR}/${id}.cpp")
  file(WRITE "${tu}" "#include <llmdlq/${header}>\n")
  # Header-only mode differs only for headers that pull in their definitions.
  file(STRINGS "${SOURCE_DIR}/include/llmdlq/${header}" has_definitions REGEX "^#ifdef LLMDLQ_HEADER_ONLY")
  set(modes compiled)
  if(has_definitions)
    list(APPEND modes header_only)
  endif()
  foreach(mode IN LISTS modes)
    set(flags ${STD_FLAG} -fsyntax-only -Wall -Wextra -Werror ${DEFINES}
              "-I${SOURCE_DIR}/include" -MD -MF "${WORK_DIR}/${id}.${mode}.d")
    if(mode STREQUAL "header_only")
      list(APPEND flags ${header_only_flags})
    endif()
    execute_process(COMMAND "${CXX_COMPILER}" ${flags} "${tu}"
                    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT result EQUAL 0)
      list(APPEND failures "${header} (${mode})")
      message("llmdlq/${header} does not compile alone (${mode}):\n${out}")
      continue()
    endif()
    if(mode STREQUAL "compiled" AND NOT header IN_LIST HEAVY)
      file(READ "${WORK_DIR}/${id}.${mode}.d" deps)
      foreach(heavy simdjson.h llmdlq/schema.hpp llmdlq/json_parser.hpp)
        string(FIND "${deps}" "${heavy}" at)
        if(at GREATER -1)
          list(APPEND failures "${header} (includes ${heavy})")
          message("llmdlq/${header} is meant to be light but includes ${heavy}")
        endif()
      endforeach()
    endif()
  endforeach()
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "headers that fail:\n  ${text}")
endif()
message(STATUS "${count} public headers compile alone, compiled and header-only")
