# The CMake options of the vcpkg port, read by portfile.cmake and by
# llmdlq's install tests, which build the project with them.

# vcpkg_check_features(FEATURES ...): each feature and the option it turns on.
set(LLMDLQ_PORT_FEATURES
  sqlite   LLMDLQ_WITH_SQLITE
  kafka    LLMDLQ_WITH_KAFKA
  redis    LLMDLQ_WITH_REDIS
  postgres LLMDLQ_WITH_POSTGRES
  llm      LLMDLQ_WITH_LLM
  crypto   LLMDLQ_WITH_CRYPTO
  prometheus LLMDLQ_WITH_PROMETHEUS
)
# Whatever the features: a package holds the libraries and nothing else.
set(LLMDLQ_PORT_OPTIONS
  -DLLMDLQ_BUILD_TESTS=OFF
  -DLLMDLQ_BUILD_TOOLS=OFF
  -DLLMDLQ_BUILD_EXAMPLES=OFF
  -DLLMDLQ_BUILD_BENCHMARKS=OFF
  -DLLMDLQ_BUILD_FUZZERS=OFF
  -DLLMDLQ_INSTALL=ON
)
