# Finds what the core needs. Included by the project and by the installed
# package's config file, so a host finds the dependencies the library was
# built with.
macro(llmdlq_find_dependency name)
  if(CMAKE_FIND_PACKAGE_NAME STREQUAL "llmdlq")
    find_dependency(${name} ${ARGN})
  else()
    find_package(${name} ${ARGN} REQUIRED)
  endif()
endmacro()

include(CMakeFindDependencyMacro)
llmdlq_find_dependency(simdjson CONFIG)
llmdlq_find_dependency(Boost 1.81 CONFIG COMPONENTS json)
llmdlq_find_dependency(PCRE2)
llmdlq_find_dependency(fmt CONFIG)
llmdlq_find_dependency(OpenSSL COMPONENTS Crypto)
llmdlq_find_dependency(SQLite3)
