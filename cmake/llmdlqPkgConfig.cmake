# llmdlq.pc: the core library for hosts built without CMake
# (`pkg-config --cflags --libs llmdlq`). Paths are relative to the file, so
# the installed prefix can move.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(LLMDLQ_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(LLMDLQ_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" to_prefix "${to_prefix}")
  set(LLMDLQ_PC_PREFIX "\${pcfiledir}/${to_prefix}")
  set(LLMDLQ_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(LLMDLQ_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(LLMDLQ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# The private dependencies are the host's to link when the core is static.
set(LLMDLQ_PC_REQUIRES "simdjson")
set(private_requires "fmt libpcre2-8 libcrypto")
if(LLMDLQ_CORE_TYPE STREQUAL "STATIC_LIBRARY")
  string(APPEND LLMDLQ_PC_REQUIRES " ${private_requires}")
  set(LLMDLQ_PC_REQUIRES_PRIVATE "")
else()
  set(LLMDLQ_PC_REQUIRES_PRIVATE "${private_requires}")
endif()
# Boost ships no .pc file. Its folder is known when Boost::json is the
# library itself (not, as some package managers make it, an interface target).
get_target_property(boost_json_type Boost::json TYPE)
if(boost_json_type STREQUAL "INTERFACE_LIBRARY")
  set(LLMDLQ_PC_LIBS "-lboost_json")
else()
  set(LLMDLQ_PC_LIBS "-L$<TARGET_LINKER_FILE_DIR:Boost::json> -lboost_json")
endif()
set(LLMDLQ_PC_CFLAGS "")
if(LLMDLQ_EXPECTED STREQUAL "tl")
  set(LLMDLQ_PC_CFLAGS
    "-DLLMDLQ_USE_TL_EXPECTED -I$<JOIN:$<TARGET_PROPERTY:tl::expected,INTERFACE_INCLUDE_DIRECTORIES>, -I>")
endif()

configure_file(cmake/llmdlq.pc.in "${PROJECT_BINARY_DIR}/llmdlq.pc.in" @ONLY)
file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/llmdlq.pc" INPUT "${PROJECT_BINARY_DIR}/llmdlq.pc.in")
install(FILES "${PROJECT_BINARY_DIR}/llmdlq.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
