// SPDX-License-Identifier: MIT
#include "store_spec.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#  include <llmdlq/postgres/store.hpp>
#endif
#ifdef LLMDLQ_TOOL_WITH_KAFKA
#  include <llmdlq/kafka/topic_store.hpp>
#endif

namespace llmdlq::cli {
namespace {

bool identifier(std::string_view name) {
  return !name.empty() && !(name[0] >= '0' && name[0] <= '9') && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Splits a trailing `#[SCHEMA.]TABLE` off `location` when what follows the
// last `#` is one (a `#` elsewhere, in a password say, stays where it is).
void split_table(store_spec& spec, bool schema_allowed) {
  const auto hash = spec.location.rfind('#');
  if (hash == std::string::npos) return;
  const std::string_view name = std::string_view(spec.location).substr(hash + 1);
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) {
    if (!identifier(name)) return;
    spec.table = std::string(name);
  } else {
    if (!schema_allowed || !identifier(name.substr(0, dot)) || !identifier(name.substr(dot + 1))) return;
    spec.schema = std::string(name.substr(0, dot));
    spec.table = std::string(name.substr(dot + 1));
  }
  spec.location.resize(hash);
}

}  // namespace

std::string display_name(const store_spec& spec) {
  using enum store_spec::store_kind;
  if (spec.kind == kafka) return "kafka:" + spec.location + "/" + spec.topic;
  if (spec.kind == redis) return fmt::format("redis:{}:{}/{}", spec.location, spec.port, spec.topic);
  if (spec.kind == jsonl) return spec.location;
  std::string name = spec.kind == sqlite ? spec.location : "postgres";
  if (!spec.table.empty()) name += "#" + (spec.schema.empty() ? spec.table : spec.schema + "." + spec.table);
  return name;
}

namespace {

struct store_form {
  store_spec::store_kind kind;
  std::string_view prefix;
  std::string_view form;
};

constexpr store_form forms[] = {
    {store_spec::store_kind::sqlite, "sqlite:", "sqlite:PATH[#TABLE]"},
    {store_spec::store_kind::postgres, "postgres:", "postgres:CONNINFO[#[SCHEMA.]TABLE]"},
    {store_spec::store_kind::kafka, "kafka:", "kafka:BROKERS/TOPIC"},
    {store_spec::store_kind::jsonl, "jsonl:", "jsonl:PATH"},
    {store_spec::store_kind::redis, "redis:", "redis:HOST:PORT/STREAM"},
};

// `BROKERS/TOPIC` into the spec; false when it is not that.
bool split_topic(store_spec& spec, std::string_view rest) {
  const auto slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return false;
  spec.location = std::string(rest.substr(0, slash));
  spec.topic = std::string(rest.substr(slash + 1));
  return true;
}

// `HOST:PORT/STREAM` into the spec; false when it is not that.
bool split_stream(store_spec& spec, std::string_view rest) {
  if (!split_topic(spec, rest)) return false;
  const auto colon = spec.location.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string_view port = std::string_view(spec.location).substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), spec.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || spec.port <= 0) return false;
  spec.location.resize(colon);
  return true;
}

// The rest of `text` after its form's prefix into `spec`; false when it does not fit the form.
bool read_location(store_spec& spec, std::string_view rest) {
  using enum store_spec::store_kind;
  switch (spec.kind) {
    case kafka: return split_topic(spec, rest);
    case redis: return split_stream(spec, rest);
    case sqlite:
    case postgres:
      spec.location = std::string(rest);
      split_table(spec, spec.kind == postgres);
      return true;
    case jsonl: spec.location = std::string(rest); return true;
  }
  return false;
}

}  // namespace

std::string store_forms(store_kinds kinds) {
  std::string text;
  for (const auto& form : forms) {
    if (std::find(kinds.begin(), kinds.end(), form.kind) == kinds.end()) continue;
    if (!text.empty()) text += " | ";
    text += form.form;
    if (form.kind == store_spec::store_kind::kafka) text += " (read only)";
  }
  return text;
}

expected<store_spec, std::string> parse_store_spec(std::string_view text, store_kinds kinds) {
  const auto form = std::find_if(std::begin(forms), std::end(forms), [&](const store_form& f) {
    return text.starts_with(f.prefix) && std::find(kinds.begin(), kinds.end(), f.kind) != kinds.end();
  });
  if (form == std::end(forms)) return unexpected(fmt::format("no store '{}': give {}", text, store_forms(kinds)));
  store_spec spec;
  spec.kind = form->kind;
  if (!read_location(spec, text.substr(form->prefix.size()))) {
    return unexpected(fmt::format("'{}' is not {}", text, form->form));
  }
  if (spec.location.empty()) return unexpected(fmt::format("'{}' names no store: give {}", text, store_forms(kinds)));
  return spec;
}

expected<std::unique_ptr<moderation_store>, store_open_error> open_store(const store_spec& spec, bool read_only) {
  if (spec.kind == store_spec::store_kind::sqlite) {
    const std::filesystem::path path(spec.location);
    if (read_only && !std::filesystem::exists(path)) {
      return unexpected(store_open_error{"no DLQ at " + path.string(), true});
    }
    sqlite_store_options options;
    options.read_only = read_only;
    if (!spec.table.empty()) options.table = spec.table;
    auto store = sqlite_store::open(path, std::move(options));
    if (!store) return unexpected(store_open_error{std::move(store.error().message), read_only});
    return std::unique_ptr<moderation_store>(std::make_unique<sqlite_store>(std::move(*store)));
  }
  if (spec.kind == store_spec::store_kind::jsonl || spec.kind == store_spec::store_kind::redis) {
    return unexpected(store_open_error{display_name(spec) + " is not a moderation store", true});
  }
  if (spec.kind == store_spec::store_kind::kafka) {
#ifdef LLMDLQ_TOOL_WITH_KAFKA
    if (!read_only) return unexpected(store_open_error{"a Kafka topic is read only: list, show, stats and top read it", true});
    kafka_topic_options options;
    options.properties = {{"bootstrap.servers", spec.location}};
    options.topic = spec.topic;
    auto topic = kafka_topic_store::open(std::move(options));
    if (!topic) return unexpected(store_open_error{std::move(topic.error().message), false});
    return std::unique_ptr<moderation_store>(std::move(*topic));
#else
    return unexpected(store_open_error{"this llmdlq was built without Kafka", true});
#endif
  }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  postgres_store_options options;
  options.migrate = !read_only;
  if (!spec.table.empty()) options.table = spec.table;
  options.schema = spec.schema;
  auto store = postgres_store::open(spec.location, std::move(options));
  if (!store) return unexpected(store_open_error{std::move(store.error().message), false});
  return std::unique_ptr<moderation_store>(std::make_unique<postgres_store>(std::move(*store)));
#else
  return unexpected(store_open_error{"this llmdlq was built without PostgreSQL", true});
#endif
}

expected<std::unique_ptr<moderation_store>, std::string> open_moderation_store(std::string_view text, bool read_only) {
  auto spec = parse_store_spec(text);
  if (!spec) return unexpected(std::move(spec.error()));
  auto store = open_store(*spec, read_only);
  if (!store) return unexpected(std::move(store.error().message));
  return std::move(*store);
}

}  // namespace llmdlq::cli
