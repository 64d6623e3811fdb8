# What each part of llmdlq needs, written once for the project and for the
# installed package's config file (which sets LLMDLQ_EXPECTED to the flavour
# it was built with). Macros, not functions: in the config file a missing
# dependency returns from find_package(llmdlq) with llmdlq_FOUND false.
include(CMakeFindDependencyMacro)

macro(llmdlq_find_dependency name)
  if(CMAKE_FIND_PACKAGE_NAME STREQUAL "llmdlq")
    find_dependency(${name} ${ARGN})
  else()
    find_package(${name} ${ARGN} REQUIRED)
  endif()
endmacro()

# llmdlq::core and llmdlq::header_only. PCRE2, fmt and OpenSSL are private to
# the compiled core, but a static core still links them and the header-only
# target compiles code that calls them.
macro(llmdlq_find_core_dependencies)
  llmdlq_find_dependency(simdjson CONFIG)
  llmdlq_find_dependency(Boost 1.81 CONFIG COMPONENTS json)
  llmdlq_find_dependency(PCRE2)
  llmdlq_find_dependency(fmt CONFIG)
  llmdlq_find_dependency(OpenSSL COMPONENTS Crypto)
  if(LLMDLQ_EXPECTED STREQUAL "tl")
    llmdlq_find_dependency(tl-expected CONFIG)
  endif()
endmacro()

# llmdlq::<component>, one of the transports (or llm, crypto, prometheus): its client library.
macro(llmdlq_find_component_dependencies component)
  if("${component}" STREQUAL "sqlite")
    llmdlq_find_dependency(SQLite3)
  elseif("${component}" STREQUAL "kafka")
    llmdlq_find_dependency(RdKafka)
  elseif("${component}" STREQUAL "redis")
    llmdlq_find_dependency(Hiredis)
  elseif("${component}" STREQUAL "postgres")
    llmdlq_find_dependency(PostgreSQL)
  elseif("${component}" STREQUAL "llm")
    llmdlq_find_dependency(CURL)
  elseif("${component}" STREQUAL "crypto")
    llmdlq_find_dependency(Sodium)
  elseif("${component}" STREQUAL "prometheus")
    llmdlq_find_dependency(prometheus-cpp CONFIG)
  endif()
endmacro()
