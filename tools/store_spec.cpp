// SPDX-License-Identifier: MIT
#include "store_spec.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#  include <llmdlq/postgres/store.hpp>
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
  std::string name = spec.kind == store_spec::store_kind::sqlite ? spec.location : "postgres";
  if (!spec.table.empty()) name += "#" + (spec.schema.empty() ? spec.table : spec.schema + "." + spec.table);
  return name;
}

expected<store_spec, std::string> parse_store_spec(std::string_view text) {
  store_spec spec;
  if (text.starts_with("sqlite:")) {
    spec.kind = store_spec::store_kind::sqlite;
    spec.location = std::string(text.substr(7));
    split_table(spec, false);
  } else if (text.starts_with("postgres:")) {
    spec.kind = store_spec::store_kind::postgres;
    spec.location = std::string(text.substr(9));
    split_table(spec, true);
  } else {
    return unexpected(fmt::format("no store '{}': give {}", text, store_spec_forms));
  }
  if (spec.location.empty()) return unexpected(fmt::format("'{}' names no store: give {}", text, store_spec_forms));
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
