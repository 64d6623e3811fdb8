// SPDX-License-Identifier: MIT
// The store specs the `llmdlq` commands take, as the tool names and reports
// them. The grammar (llmdlq/store_spec.hpp) and the opening
// (llmdlq/stores/open.hpp) are the library's; here are the forms each
// command takes, and how a store that did not open becomes an exit status.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <llmdlq/expected.hpp>
#include <llmdlq/moderation.hpp>
#include <llmdlq/store_spec.hpp>
#include <llmdlq/stores/open.hpp>

namespace llmdlq::cli {

/// The kinds a command takes, as a list (`constexpr store_kinds sinks = {...}`).
using store_kinds = std::initializer_list<store_spec::store_kind>;

/// The stores a moderation command reads: SQLite, PostgreSQL and Kafka.
inline constexpr store_kinds moderation_stores = {store_spec::store_kind::sqlite, store_spec::store_kind::postgres,
                                                  store_spec::store_kind::kafka};

/// The stores an operator acts on: SQLite and PostgreSQL (a Kafka topic is read only).
inline constexpr store_kinds writable_moderation_stores = {store_spec::store_kind::sqlite,
                                                           store_spec::store_kind::postgres};

/// The forms of `kinds` for a person, `|` between them: `sqlite:PATH[#TABLE] | …`.
[[nodiscard]] inline std::string store_forms(store_kinds kinds = moderation_stores) {
  return llmdlq::store_forms(llmdlq::store_kinds(kinds));
}

/// Reads `text`; why not, when it is none of the forms of `kinds` (a usage error).
[[nodiscard]] inline expected<store_spec, std::string> parse_store_spec(std::string_view text,
                                                                        store_kinds kinds = moderation_stores) {
  auto spec = llmdlq::parse_store_spec(text, llmdlq::store_kinds(kinds));
  if (!spec) return unexpected(std::move(spec.error().message));
  return std::move(*spec);
}

/// Why opening a store failed, and whether the fault is the command line's
/// (exit_usage) or the store's (exit_sink).
struct store_open_error {
  std::string message;
  bool usage = false;
};

/// Opens the store `spec` names (llmdlq::open_store). The fault is the
/// command line's when the library says so (is_usage_error: a spec that
/// names no store, a kind not built, a file that is not there) and, for the
/// read-only views, when a SQLite file does not open at all: the file named
/// is no DLQ they can read. The tool says which commands read a topic.
[[nodiscard]] inline expected<std::unique_ptr<moderation_store>, store_open_error> open_store(const store_spec& spec,
                                                                                              bool read_only) {
  auto store = llmdlq::open_store(spec, {.read_only = read_only});
  if (store) return std::move(*store);
  const open_errc code = store.error().code;
  if (code == open_errc::read_only) {
    return unexpected(store_open_error{"a Kafka topic is read only: list, show, stats and top read it", true});
  }
  const bool usage = is_usage_error(code) || (read_only && spec.kind == store_spec::store_kind::sqlite);
  return unexpected(store_open_error{std::move(store.error().message), usage});
}

/// parse_store_spec and open_store in one, the failure as text.
[[nodiscard]] inline expected<std::unique_ptr<moderation_store>, std::string> open_moderation_store(
    std::string_view text, bool read_only) {
  auto spec = parse_store_spec(text);
  if (!spec) return unexpected(std::move(spec.error()));
  auto store = open_store(*spec, read_only);
  if (!store) return unexpected(std::move(store.error().message));
  return std::move(*store);
}

}  // namespace llmdlq::cli
