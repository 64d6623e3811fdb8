// SPDX-License-Identifier: MIT
// A host of llmdlq::redis: a connection to a port where no server listens
// fails with an error (and does not crash).
#include <cstdio>

#include <llmdlq/redis/stream_sink.hpp>

int main() {
  llmdlq::redis_stream_sink_options options;
  options.connection.port = 1;
  if (llmdlq::redis_stream_sink::open(options)) return 1;
  std::printf("llmdlq::redis works\n");
  return 0;
}
