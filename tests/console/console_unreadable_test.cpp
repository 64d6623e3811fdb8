// SPDX-License-Identifier: MIT
// What the console shows of a record that does not read back: its queue row
// says so with its id, the counts name it, and its page says why, offering
// no action when its status is not one.
#include <string>

#include "catch.hpp"
#include "console/charts.hpp"
#include "console/pages.hpp"
#include "console/store_access.hpp"
#include "support/broken_records.hpp"

namespace console_unreadable_test {

using namespace llmdlq::cli;
using llmdlq::test::broken_records_dlq;
using llmdlq::test::record_corruption;

TEST_CASE("console: a record that does not read back is listed and counted as unreadable, with why",
          "[console][pages][unreadable]") {
  for (const record_corruption& broken : llmdlq::test::record_corruptions()) {
    if (broken.expiry_only) continue;  // the console reads no expiry
    DYNAMIC_SECTION(broken.name) {
      broken_records_dlq q;
      const std::size_t victim = broken_records_dlq::pending_victim;
      const std::string id = q.ids[victim];
      q.corrupt(victim, broken.sql);
      auto dlq = dlq_reader::open(q.store, true);
      REQUIRE(dlq.has_value());
      session_table sessions;
      const auto session = sessions.open("alice");
      const auto now = llmdlq::system_now();

      auto overview = dlq->counts();
      REQUIRE(overview.has_value());
      const std::string counts = counts_tables_html(*overview, now);
      CHECK(counts.find("unreadable") != std::string::npos);
      CHECK(counts.find(id) != std::string::npos);

      // The pending queue: every pending letter, the broken one (unless its status is broken) marked.
      auto page = dlq->queue({}, std::nullopt, 100);
      REQUIRE(page.has_value());
      CHECK(page->records.size() == (broken.status ? 39u : 40u));
      const std::string queue = queue_page_html(session, {}, *page, *overview, now);
      if (!broken.status) {
        const auto row = queue.find(id);
        REQUIRE(row != std::string::npos);
        const auto row_end = queue.find("</tr>", row);
        CHECK(queue.substr(row, row_end - row).find("unreadable") != std::string::npos);
      }

      // Its own page says why; an unknown status offers no action.
      auto record = dlq->store().get(id);
      REQUIRE(record.has_value());
      REQUIRE(record->has_value());
      const std::string html = record_page_html(session, **record, {});
      CHECK(html.find("does not read back") != std::string::npos);
      if (broken.status) {
        CHECK(html.find("bogus") != std::string::npos);
        CHECK(html.find("action=\"/records/") == std::string::npos);
      }
    }
  }
}

}  // namespace console_unreadable_test
