# Compiles every public header alone, with the compiled library's settings
# and, where it has definitions to pull in, header-only; and checks that the light headers stay light:
# only the headers in HEAVY may reach simdjson or the schema engine.
# Variables: SOURCE_DIR, WORK_DIR, CXX_COMPILER, STD_FLAG,
# DEFINES (;-list of -D and -I flags), TRANSPORTS (;-list of header folders built).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(HEAVY llmdlq.hpp json_parser.hpp schema.hpp process.hpp pipeline.hpp content_check.hpp
          coerce.hpp typed.hpp typed_pipeline.hpp llm/recovery_ladder.hpp llm/schema_relaxation.hpp
          stream_judge.hpp chat_stream.hpp judged_stream.hpp)

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
      list(APPEND flags -DLLMDLQ_HEADER_ONLY)
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
