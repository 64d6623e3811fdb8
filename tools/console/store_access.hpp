// SPDX-License-Identifier: MIT
// What the console and `llmdlq report` read from a DLQ and check before an
// action: the queue page by page, the counts, dead letters over time, the
// spans of a raw response a failure points at, and a correction's errors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/envelope.hpp>
#include <llmdlq/moderation.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/sqlite/store.hpp>
#include <llmdlq/timestamp.hpp>

namespace llmdlq::cli {

/// Which records the queue page shows; an empty field matches any value.
struct queue_filter {
  moderation_status status = moderation_status::pending;
  std::string category;
  std::string triage;
  std::string failure_code;
};

/// Where the next page starts: after this record, in creation order.
struct queue_cursor {
  std::string after_created_at;
  std::string after_dlq_id;
};

struct queue_page {
  std::vector<moderation_record> records;
  std::optional<queue_cursor> next;  ///< nothing on the last page
};

/// Dead letters created in one day (UTC), by category; `processed` is the
/// traffic the store counted in it (0 when it counts none).
struct timeline_bucket {
  std::string day;  ///< YYYY-MM-DD
  std::map<std::string, std::uint64_t> by_category;
  std::uint64_t processed = 0;
};

/// Everything the charts and counts tables show.
struct dlq_overview {
  dlq_statistics statistics;
  std::optional<std::string> oldest_pending_created_at;  ///< RFC 3339
  std::vector<timeline_bucket> timeline;                 ///< oldest day first, days without letters included
};

/// A DLQ named as `sqlite:PATH`.
class dlq_reader {
 public:
  [[nodiscard]] static expected<dlq_reader, std::string> open(std::string_view spec, bool read_only);

  [[nodiscard]] moderation_store& store() noexcept { return *store_; }

  [[nodiscard]] expected<queue_page, moderation_error> queue(const queue_filter& filter,
                                                             const std::optional<queue_cursor>& after,
                                                             std::size_t limit);
  /// The counts and the oldest pending letter, without a timeline.
  [[nodiscard]] expected<dlq_overview, moderation_error> counts();
  /// The counts, and the timeline of the letters created at or after `since`.
  [[nodiscard]] expected<dlq_overview, moderation_error> overview(std::optional<timestamp> since = std::nullopt);

 private:
  explicit dlq_reader(std::unique_ptr<sqlite_store> store) : store_(std::move(store)) {}
  std::unique_ptr<sqlite_store> store_;
};

/// A byte range of a raw response that a failure points at, and what it is.
struct error_span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string label;
};

/// The spans of `raw` that `e`'s syntax location and validation errors
/// point at, in order and not overlapping.
[[nodiscard]] std::vector<error_span> error_spans(const envelope& e, std::string_view raw);

/// Why `corrected` may not resolve a record: not strict JSON, or (with a
/// schema) its validation errors. Empty when it is acceptable.
[[nodiscard]] std::vector<validation_error> check_resolution(const schema* schema, std::string_view corrected);

}  // namespace llmdlq::cli
