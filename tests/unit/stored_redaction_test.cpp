// SPDX-License-Identifier: MIT
// What the embedded sinks write holds no detected value: the memory sink's
// envelopes and the JSON Lines file's bytes, read back raw.
#include <string>

#include "catch.hpp"
#include "llmdlq/jsonl_file_sink.hpp"
#include "llmdlq/memory_sink.hpp"
#include "llmdlq/pipeline.hpp"
#include "support/pii_sample.hpp"
#include "support/temp_dir.hpp"

namespace stored_redaction_test {

TEST_CASE("the memory sink and a JSON Lines file hold only redacted text", "[redaction]") {
  const auto e = llmdlq::test::pii_envelope();

  llmdlq::memory_sink memory;
  REQUIRE(memory.publish(e).has_value());
  std::string held;
  for (const auto& stored : memory.envelopes()) held += llmdlq::serialize(stored);
  llmdlq::test::check_no_pii(held);

  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  {
    auto sink = llmdlq::jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(e).has_value());
  }
  llmdlq::test::check_no_pii(llmdlq::test::slurp(path));
}

}  // namespace stored_redaction_test
