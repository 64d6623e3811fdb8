# A host of the installed package: find_package(llmdlq CONFIG) with the
# components COMPONENTS (empty: the core; "header_only": the core's program
# on llmdlq::header_only), built and run. MUST_FAIL: a regex find_package's
# message must match, the configuration failing. The core alone must work on
# a host without the transports' client libraries, which is simulated by
# hiding them from find_package.
# Variables: those of common.cmake, PREFIX, COMPONENTS, MUST_FAIL.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")

set(args)
if(COMPONENTS STREQUAL "header_only")
  list(APPEND args -DLLMDLQ_HEADER_ONLY=ON)
elseif(COMPONENTS)
  list(APPEND args "-DLLMDLQ_COMPONENTS=${COMPONENTS}")
endif()
if(NOT COMPONENTS OR COMPONENTS STREQUAL "header_only")
  foreach(package RdKafka Hiredis PostgreSQL SQLite3 CURL)
    list(APPEND args -DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON)
  endforeach()
endif()

if(MUST_FAIL)
  llmdlq_consumer_must_not_find(consumer "${PREFIX}" "${MUST_FAIL}" ${args})
else()
  llmdlq_consumer(consumer "${PREFIX}" ${args})
endif()
