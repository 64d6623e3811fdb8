// SPDX-License-Identifier: MIT
// Every error enum as a std::error_code: its category's name, its message,
// comparisons, and the permanent/transient answer of is_permanent().
#include <string>
#include <string_view>
#include <system_error>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/kafka/error.hpp>
#include <llmdlq/moderation.hpp>
#include <llmdlq/redis/error.hpp>
#include <llmdlq/repair.hpp>
#include <llmdlq/replay_error.hpp>
#include <llmdlq/replay_state.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/sink.hpp>

#include "catch.hpp"

namespace error_category_test {

namespace {

using llmdlq::failure_condition;

// Every enumerator from the first to `last` has a name of its own, which is
// also the message of its error code unless the enum describes it, and a
// code of the category `category`.
template <class E>
void check_every_enumerator(E last, std::string_view category, bool described) {
  for (int value = 0; value <= static_cast<int>(last); ++value) {
    const auto code = static_cast<E>(value);
    const std::error_code ec = code;
    INFO(category << " " << value);
    CHECK(ec.value() == value);
    CHECK(std::string_view(ec.category().name()) == category);
    const std::string_view name = to_string(code);
    CHECK_FALSE(name.empty());
    CHECK(name != "unknown");
    if (!described) CHECK(ec.message() == name);
    CHECK(ec.message() != "unknown error");
    for (int other = 0; other < value; ++other) CHECK(to_string(static_cast<E>(other)) != name);
  }
  const std::error_code beyond = static_cast<E>(static_cast<int>(last) + 1);
  CHECK(beyond.message() == "unknown error");
}

}  // namespace

TEST_CASE("an errc converts to a std::error_code of its llmdlq category") {
  std::error_code ec = llmdlq::schema_errc::unresolved_reference;
  CHECK(std::string_view(ec.category().name()) == "llmdlq.schema");
  CHECK(ec.message() == "a reference cannot be resolved");
  CHECK(ec == llmdlq::schema_errc::unresolved_reference);
  CHECK(ec != llmdlq::schema_errc::invalid_json);
  CHECK(static_cast<bool>(ec));

  ec = make_error_code(llmdlq::sink_errc::timeout);
  CHECK(std::string_view(ec.category().name()) == "llmdlq.sink");
  CHECK(ec.message() == "timeout");
  CHECK(ec == llmdlq::sink_errc::timeout);
}

TEST_CASE("one category object per enum, told apart by value and category") {
  const std::error_code sink_timeout = llmdlq::sink_errc::timeout;
  const std::error_code kafka_timeout = llmdlq::kafka_errc::timeout;
  const std::error_code redis_timeout = llmdlq::redis_errc::timeout;
  CHECK(&sink_timeout.category() == &std::error_code(llmdlq::sink_errc::rejected).category());
  CHECK(sink_timeout != kafka_timeout);
  CHECK(kafka_timeout != redis_timeout);
  CHECK(sink_timeout.message() == kafka_timeout.message());
  CHECK(std::error_code(llmdlq::json_errc::invalid_utf8) != std::error_code(llmdlq::repair_errc::invalid_utf8));
  CHECK(std::error_code(llmdlq::json_errc::empty_document) != std::error_code());
}

TEST_CASE("every enumerator has a name and a message") {
  check_every_enumerator(llmdlq::repair_errc::budget_exceeded, "llmdlq.repair", false);
  check_every_enumerator(llmdlq::json_errc::out_of_memory, "llmdlq.json", true);
  check_every_enumerator(llmdlq::schema_errc::unknown_dialect, "llmdlq.schema", true);
  check_every_enumerator(llmdlq::sink_errc::unsafe_file, "llmdlq.sink", false);
  check_every_enumerator(llmdlq::moderation_errc::unreadable_record, "llmdlq.moderation", false);
  check_every_enumerator(llmdlq::replay_state_errc::store_unavailable, "llmdlq.replay_state", false);
  check_every_enumerator(llmdlq::replay_errc::target_refused, "llmdlq.replay", false);
  check_every_enumerator(llmdlq::kafka_errc::fenced, "llmdlq.kafka", false);
  check_every_enumerator(llmdlq::redis_errc::closed, "llmdlq.redis", false);
}

TEST_CASE("the described enums' messages are their descriptions, their names their enumerators") {
  CHECK(llmdlq::to_string(llmdlq::json_errc::unexpected_end) == "unexpected_end");
  CHECK(std::error_code(llmdlq::json_errc::unexpected_end).message() ==
        llmdlq::describe(llmdlq::json_errc::unexpected_end));
  CHECK(llmdlq::describe(llmdlq::json_errc::unexpected_end) == "unexpected end of input");
  CHECK(llmdlq::to_string(llmdlq::schema_errc::too_complex) == "too_complex");
  CHECK(std::error_code(llmdlq::schema_errc::too_complex).message() ==
        "the schema nests too deeply or compiles to too many nodes");
}

TEST_CASE("to_string and is_permanent keep their answers, out-of-range values included") {
  static_assert(llmdlq::to_string(llmdlq::sink_errc::unsafe_file) == "unsafe_file");
  static_assert(llmdlq::is_permanent(llmdlq::moderation_errc::not_found));
  CHECK(llmdlq::to_string(llmdlq::repair_errc::ambiguous) == "ambiguous");
  CHECK(llmdlq::to_string(static_cast<llmdlq::repair_errc>(200)) == "no_json");
  CHECK(llmdlq::to_string(static_cast<llmdlq::sink_errc>(200)) == "unknown");
  CHECK(llmdlq::to_string(static_cast<llmdlq::replay_state_errc>(200)) == "unknown");
  CHECK(llmdlq::describe(static_cast<llmdlq::json_errc>(200)) == "unknown error");
  CHECK(llmdlq::describe(static_cast<llmdlq::schema_errc>(200)) == "unknown error");

  CHECK(llmdlq::is_permanent(llmdlq::sink_errc::rejected));
  CHECK(llmdlq::is_permanent(llmdlq::sink_errc::unsafe_file));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::sink_errc::unavailable));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::sink_errc::io_error));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::sink_errc::timeout));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::sink_errc::closed));
  CHECK(llmdlq::is_permanent(llmdlq::moderation_errc::invalid_transition));
  CHECK(llmdlq::is_permanent(llmdlq::moderation_errc::invalid_resolution));
  CHECK(llmdlq::is_permanent(llmdlq::moderation_errc::unreadable_record));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::moderation_errc::store_unavailable));
  CHECK(llmdlq::is_permanent(llmdlq::kafka_errc::invalid_configuration));
  CHECK(llmdlq::is_permanent(llmdlq::kafka_errc::rejected));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::kafka_errc::fatal));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::kafka_errc::timeout));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::kafka_errc::aborted));
  CHECK(llmdlq::is_permanent(llmdlq::kafka_errc::fenced));
  CHECK(llmdlq::is_permanent(llmdlq::redis_errc::rejected));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::redis_errc::protocol_error));
  // A replay stopped by a refusal stops there again; the rest may get past it next time.
  CHECK(llmdlq::is_permanent(llmdlq::replay_errc::source_refused));
  CHECK(llmdlq::is_permanent(llmdlq::replay_errc::target_refused));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::replay_errc::source_unavailable));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::replay_errc::state_unavailable));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::replay_errc::lease_held));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::replay_errc::lease_lost));
  CHECK_FALSE(llmdlq::is_permanent(llmdlq::replay_errc::target_unavailable));
  CHECK(llmdlq::to_string(static_cast<llmdlq::replay_errc>(200)) == "unknown");
  CHECK_FALSE(llmdlq::is_permanent(static_cast<llmdlq::sink_errc>(200)));
}

TEST_CASE("an error code compares equal to the failure_condition its is_permanent() names") {
  const auto agrees = [](auto code) {
    const std::error_code ec = code;
    const bool permanent = llmdlq::is_permanent(code);
    return (ec == failure_condition::permanent) == permanent && (ec == failure_condition::transient) == !permanent;
  };
  for (int v = 0; v <= static_cast<int>(llmdlq::sink_errc::unsafe_file); ++v) {
    CHECK(agrees(static_cast<llmdlq::sink_errc>(v)));
  }
  for (int v = 0; v <= static_cast<int>(llmdlq::moderation_errc::unreadable_record); ++v) {
    CHECK(agrees(static_cast<llmdlq::moderation_errc>(v)));
  }
  for (int v = 0; v <= static_cast<int>(llmdlq::kafka_errc::fenced); ++v) {
    CHECK(agrees(static_cast<llmdlq::kafka_errc>(v)));
  }
  for (int v = 0; v <= static_cast<int>(llmdlq::redis_errc::closed); ++v) {
    CHECK(agrees(static_cast<llmdlq::redis_errc>(v)));
  }
  for (int v = 0; v <= static_cast<int>(llmdlq::replay_errc::target_refused); ++v) {
    CHECK(agrees(static_cast<llmdlq::replay_errc>(v)));
  }

  // Enums without is_permanent() are neither.
  const std::error_code parse = llmdlq::json_errc::too_deep;
  CHECK(parse != failure_condition::permanent);
  CHECK(parse != failure_condition::transient);
  const std::error_code lease = llmdlq::replay_state_errc::lease_held;
  CHECK(lease != failure_condition::transient);

  const std::error_condition permanent = failure_condition::permanent;
  CHECK(std::string_view(permanent.category().name()) == "llmdlq.failure");
  CHECK(permanent.message() == "permanent: the same call can never succeed");
  CHECK(std::error_code(std::make_error_code(std::errc::timed_out)) != failure_condition::transient);
}

TEST_CASE("a replay state's failure keeps its lease codes and its holder as a replay's") {
  using llmdlq::replay_errc;
  using llmdlq::replay_state_errc;
  const auto of = [](replay_state_errc code) {
    return llmdlq::detail::replay_error_of({code, "m", "them", llmdlq::timestamp{}});
  };
  CHECK(of(replay_state_errc::lease_held).code == replay_errc::lease_held);
  CHECK(of(replay_state_errc::lease_held).holder == "them");
  CHECK(of(replay_state_errc::lease_held).expires_at.has_value());
  CHECK(of(replay_state_errc::lease_lost).code == replay_errc::lease_lost);
  CHECK(of(replay_state_errc::store_unavailable).code == replay_errc::state_unavailable);
  CHECK(of(replay_state_errc::store_unavailable).message == "m");
  CHECK(of(replay_state_errc::attempts_exhausted).code == replay_errc::state_unavailable);
}

}  // namespace error_category_test
