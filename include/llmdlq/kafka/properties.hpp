// SPDX-License-Identifier: MIT
// How a host configures librdkafka and receives its log lines, for every
// Kafka producer and consumer.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// librdkafka configuration properties, named as librdkafka names them
/// (`bootstrap.servers`, `security.protocol`, `linger.ms`, ...).
using kafka_properties = std::map<std::string, std::string>;

/// Receives librdkafka's log lines: the syslog level (3 error ... 7 debug),
/// the facility and the message. Called from librdkafka's threads: it must be
/// thread-safe. llmdlq itself never prints; without a function the lines are
/// dropped.
using kafka_log_function = std::function<void(int level, std::string_view facility, std::string_view message)>;

LLMDLQ_END_NAMESPACE
