// SPDX-License-Identifier: MIT
// Where the Redis server is and how long to wait for it: the options
// redis_stream_sink and redis_stream_reader connect with.
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <chrono>
#include <string>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct redis_connection_options {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string username;  ///< an ACL user (Redis 6+); empty: `AUTH password` only
  std::string password;  ///< empty: no AUTH
  int db = 0;            ///< SELECT'ed after connecting when not 0
  std::chrono::milliseconds connect_timeout{2000};
  /// How long to wait for the server to take a request or send the next
  /// reply before the call fails with a timeout.
  std::chrono::milliseconds command_timeout{5000};
};

LLMDLQ_END_NAMESPACE
