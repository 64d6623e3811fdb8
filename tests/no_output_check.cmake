# The library never prints, aborts or exits: its objects reference none of
# the functions that would. Variables: NM, LIBRARY.
#
# nm sees which functions an object calls, not on which file descriptor, so
# write(2) is allowed only in the objects that write files they open
# themselves (fd_writers); anywhere else it fails the check. A FILE* stream
# or iostream is never the library's: every stdio and iostream output
# function is forbidden outright, whatever stream it is given. std::terminate
# and __assert_fail are not: the compiler calls the first where an exception
# would leave a noexcept function, and assert() is compiled out of release
# builds.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${NM}" -A --undefined-only "${LIBRARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
set(forbidden
    # stdio: formatted, unformatted, the streams themselves
    printf fprintf vprintf vfprintf dprintf vdprintf
    __printf_chk __fprintf_chk __vprintf_chk __vfprintf_chk __dprintf_chk __vdprintf_chk
    puts fputs putchar putc fputc _IO_putc fwrite fputws fputwc putwc putwchar wprintf fwprintf vwprintf vfwprintf
    fputs_unlocked putc_unlocked fputc_unlocked putchar_unlocked fwrite_unlocked
    perror psignal psiginfo err errx verr verrx warn warnx vwarn vwarnx error error_at_line
    stdout stderr _IO_2_1_stdout_ _IO_2_1_stderr_
    # iostreams
    _ZSt4cout _ZSt4cerr _ZSt4clog _ZSt5wcout _ZSt5wcerr _ZSt5wclog
    # ending the process
    abort exit _exit _Exit quick_exit)
set(fd_writes write writev)
set(fd_writers jsonl_file_sink.cpp.o jsonl_replay_target.cpp.o file_key_provider.cpp.o)

# One "where symbol" pair per undefined symbol: where is archive:object in
# an archive, the library alone in a shared library (whose objects nm cannot
# tell apart: there write(2) is not checked).
string(REGEX REPLACE "([^\n]*):[ \t]+U ([^@\n]+)(@[^\n]*)?" "\\1 \\2" references "${symbols}")
string(REPLACE ";" "<semicolon>" references "${references}")
string(REPLACE "\n" ";" references "${references}")
set(findings 0)
set(count 0)
foreach(reference IN LISTS references)
  if(NOT reference MATCHES "^(.*) ([^ ]+)$")
    continue()
  endif()
  set(where "${CMAKE_MATCH_1}")
  set(symbol "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "^.*:" "" object "${where}")
  math(EXPR count "${count} + 1")
  if(symbol IN_LIST forbidden)
    message("${object} references ${symbol}")
    math(EXPR findings "${findings} + 1")
  elseif(symbol IN_LIST fd_writes AND NOT object IN_LIST fd_writers AND object MATCHES "\\.o$")
    message("${object} references ${symbol}: only the objects that write files they open may call it")
    math(EXPR findings "${findings} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "nm listed no undefined symbol in ${LIBRARY}: nothing was checked")
endif()
if(findings GREATER 0)
  message(FATAL_ERROR "${LIBRARY}: a library must not print, abort or exit")
endif()
message(STATUS "${LIBRARY}: no printing, aborting or exiting (${count} references read)")
