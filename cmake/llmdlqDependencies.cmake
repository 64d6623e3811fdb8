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

# The transports' libraries, for those built (the installed config sets the
# LLMDLQ_WITH_* variables to what the package was built with).
if(LLMDLQ_WITH_KAFKA)
  llmdlq_find_dependency(RdKafka)
endif()
if(LLMDLQ_WITH_REDIS)
  llmdlq_find_dependency(Hiredis)
endif()
if(LLMDLQ_WITH_POSTGRES)
  llmdlq_find_dependency(PostgreSQL)
endif()
