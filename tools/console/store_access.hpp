// SPDX-License-Identifier: MIT
// What the console and `llmdlq report` read from a DLQ: the queue page by
// page, the counts, and the dead letters (and traffic) per day.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/moderation.hpp>
#include <llmdlq/timestamp.hpp>

namespace llmdlq::cli {

/// Which records the queue page shows; an empty field matches any value.
struct queue_filter {
  moderation_status status = moderation_status::pending;
  std::string category;
  std::string triage;
  std::string failure_code;
};

/// Everything the charts and counts tables show.
struct dlq_overview {
  dlq_statistics statistics;
  std::vector<dlq_timeline_bucket> timeline;  ///< one bucket per UTC day, oldest first
  unreadable_census unreadable;               ///< the records that do not read back
};

/// A DLQ named as store_spec.hpp's forms (`sqlite:PATH`, `postgres:CONNINFO`);
/// a SQLite file must exist.
class dlq_reader {
 public:
  [[nodiscard]] static expected<dlq_reader, std::string> open(std::string_view spec, bool read_only);

  [[nodiscard]] moderation_store& store() noexcept { return *store_; }

  [[nodiscard]] expected<moderation_page, moderation_error> queue(const queue_filter& filter,
                                                                  const std::optional<moderation_cursor>& after,
                                                                  std::size_t limit);
  /// The counts, the oldest pending letter and the records that do not
  /// read back (each record read once), without a timeline.
  [[nodiscard]] expected<dlq_overview, moderation_error> counts();
  /// The counts, and the days from the one holding `since` to today.
  [[nodiscard]] expected<dlq_overview, moderation_error> overview(timestamp since, timestamp now);

 private:
  explicit dlq_reader(std::unique_ptr<moderation_store> store) : store_(std::move(store)) {}
  std::unique_ptr<moderation_store> store_;
};

}  // namespace llmdlq::cli
