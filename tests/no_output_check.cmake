# The library never prints, aborts or exits: its objects reference none of
# the functions that would. Variables: NM, LIBRARY.
execute_process(COMMAND "${NM}" --undefined-only "${LIBRARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
set(forbidden printf fprintf vprintf puts fputs putchar perror abort exit _exit quick_exit
    _ZSt4cout _ZSt4cerr _ZSt4clog stdout stderr)
foreach(symbol IN LISTS forbidden)
  if(symbols MATCHES "[ \t]U ${symbol}(@[^\n]*)?\n")
    message(FATAL_ERROR "${LIBRARY} references ${symbol}: a library must not print, abort or exit")
  endif()
endforeach()
message(STATUS "${LIBRARY}: no printing, aborting or exiting")
