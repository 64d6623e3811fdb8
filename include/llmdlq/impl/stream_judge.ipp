// SPDX-License-Identifier: MIT
// Definitions for stream_judge.hpp: the byte screens (size, injection
// markers) over the new bytes, and, without local repair, json_prefix with
// the schema tracker listening.
#pragma once

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/schema/schema_access.hpp"
#include "llmdlq/detail/json/prefix_scanner.hpp"
#include "llmdlq/detail/stream/partial_document.hpp"
#include "llmdlq/detail/stream/schema_tracker.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

// What the judge reads the bytes with, when the options make them matter.
struct stream_judge::reader {
  reader(const schema& s, bool follow_schema, bool repairing, bool forced_nulls) : repairing(repairing) {
    if (follow_schema) tracker.emplace(detail::schema_access::of(s), forced_nulls);
  }

  // json_prefix's listener without a schema: nothing to say.
  struct no_schema {
    static bool value_begins(detail::stream::value_kind, std::size_t) noexcept { return true; }
    static bool element_begins(std::size_t) noexcept { return true; }
    static bool key_begins(std::size_t) noexcept { return true; }
    static bool key_ends(std::size_t, std::size_t) noexcept { return true; }
    static bool leaf_ends(detail::stream::value_kind, std::size_t, std::size_t) noexcept { return true; }
    static bool container_ends(std::size_t) noexcept { return true; }
  };

  // Under local repair, the tracker follows only a text that opens with an
  // object or array: repair takes such a value as the answer (see
  // candidate_chooser::lead), where prose, a fence or a bare string may
  // hold another.
  struct opening_container {
    detail::stream::schema_tracker& tracker;
    reader& state;
    bool value_begins(detail::stream::value_kind kind, std::size_t at) {
      if (!state.root_seen) {
        state.root_seen = true;
        if (kind != detail::stream::value_kind::object && kind != detail::stream::value_kind::array) {
          state.declined = true;
          return false;
        }
      }
      return tracker.value_begins(kind, at);
    }
    bool element_begins(std::size_t at) { return tracker.element_begins(at); }
    bool key_begins(std::size_t at) { return tracker.key_begins(at); }
    bool key_ends(std::size_t begin, std::size_t end) { return tracker.key_ends(begin, end); }
    bool leaf_ends(detail::stream::value_kind kind, std::size_t begin, std::size_t end) {
      return tracker.leaf_ends(kind, begin, end);
    }
    bool container_ends(std::size_t at) { return tracker.container_ends(at); }
  };

  detail::stream::json_prefix syntax;
  std::optional<detail::stream::schema_tracker> tracker;
  const bool repairing;   // local repair judges the whole: syntax is not death, and the schema only follows
  bool declined = false;  // repairing, and the text does not open with a container: nothing more to follow
  bool root_seen = false;
  std::size_t settle_from = 0;  // repairing, a failed token: the next byte to read for what closes it
};

LLMDLQ_INLINE stream_judge::stream_judge(const schema& schema, request_context context, process_config config)
    : schema_(&schema), context_(std::move(context)), config_(std::move(config)) {
  const judging_options& judging = config_.judging;
  if (judging.repair == repair_mode::off) {
    reader_ = std::make_unique<reader>(schema, !judging.coerce, false, judging.forced_nulls != nullptr);
  } else if (!judging.coerce && !judging.accept_repairs.allows(repair_tier::lossy)) {
    // Repair's syntactic tier changes no value that strict JSON has read
    // whole; a lossy one may drop it (a truncated tail), coercion may change it.
    reader_ = std::make_unique<reader>(schema, true, true, judging.forced_nulls != nullptr);
  }
  longest_marker_ = longest_injection_marker(judging.guard);
}

LLMDLQ_INLINE stream_judge::stream_judge(stream_judge&&) noexcept = default;
LLMDLQ_INLINE stream_judge& stream_judge::operator=(stream_judge&&) noexcept = default;
LLMDLQ_INLINE stream_judge::~stream_judge() = default;

LLMDLQ_INLINE const stream_verdict& stream_judge::feed(std::string_view chunk) {
  const std::size_t from = received_.size();
  received_.append(chunk);
  if (!verdict_.dead && !chunk.empty()) judge_new_bytes(from);
  return verdict_;
}

LLMDLQ_INLINE void stream_judge::judge_new_bytes(std::size_t from) {
  // Every cause of death is found at the byte that makes it certain, and the
  // earliest wins: so the verdict is the same however the bytes were cut.
  std::optional<stream_verdict> first;
  auto die = [&](failure_category category, std::size_t offset, auto&& message) {
    if (first && first->offset <= offset) return;
    first.emplace();
    first->dead = true;
    first->category = category;
    first->offset = offset;
    first->message = message();
  };
  const std::string_view text = received_;
  // poison: the parser refuses a text over the size limit, whatever it holds.
  if (text.size() > config_.judging.limits.max_size) {
    die(failure_category::poison, config_.judging.limits.max_size, [&] {
      return fmt::format("the response is longer than the limit of {} bytes", config_.judging.limits.max_size);
    });
  }
  // poison: a marker that ends in the new bytes; it began at most the
  // longest marker's length before them.
  if (const std::size_t longest = longest_marker_; longest != 0) {
    const std::size_t window = from > longest - 1 ? from - (longest - 1) : 0;
    if (find_injection(text.substr(window), config_.judging.guard)) {
      // The first byte that completes one: the least prefix holding a marker.
      std::size_t low = from, high = text.size() - 1;
      while (low < high) {
        const std::size_t middle = low + (high - low) / 2;
        if (find_injection(text.substr(window, middle + 1 - window), config_.judging.guard)) {
          high = middle;
        } else {
          low = middle + 1;
        }
      }
      // Every marker in that prefix ends at `low`: the one found is those bytes.
      const std::size_t begin = window +
                                find_injection(text.substr(window, low + 1 - window), config_.judging.guard)->offset;
      die(failure_category::poison, low, [&] {
        return fmt::format("prompt-injection marker \"{}\" at offset {}", text.substr(begin, low + 1 - begin), begin);
      });
    }
  }
  if (reader_ && !reader_->declined) read_json(from, first ? first->offset + 1 : text.size(), die);
  if (!first) return;
  verdict_ = std::move(*first);
  if (verdict_.category == failure_category::schema || verdict_.category == failure_category::semantic) {
    verdict_.errors = {reader_->tracker->error()};
  }
  if (config_.metrics) config_.metrics->count_stream_death(verdict_.category, verdict_.offset + 1);
}

template <class Die>
void stream_judge::read_json(std::size_t from, std::size_t until, Die& die) {
  const std::string_view text = received_;
  reader& r = *reader_;
  auto schema_death = [&](std::size_t at) {
    auto& tracker = *r.tracker;
    die(tracker.semantic() ? failure_category::semantic : failure_category::schema, at, [&] {
      const std::string& where = tracker.where();
      return fmt::format("{} error at {}: {}", tracker.semantic() ? "content" : "schema", where.empty() ? "/" : where,
                         tracker.why());
    });
  };
  if (r.repairing && r.tracker && r.tracker->dead()) {
    // A failed token found before: certain once a byte closes it.
    auto& tracker = *r.tracker;
    std::size_t at = std::max(r.settle_from, from);
    while (at < until && detail::is_json_blank(text[at])) ++at;
    r.settle_from = at;
    if (at == until) return;
    const char c = text[at];
    const bool closes = tracker.root_failed() != '\0' ? detail::may_follow_bracket(tracker.root_failed(), c)
                        : tracker.key_failed()        ? c == ':'
                                                      : (c == ',' || c == '}' || c == ']');
    if (closes) {
      schema_death(at);
    } else {
      r.declined = true;  // a byte strict JSON has not there, which repair reads on with
    }
    return;
  }
  auto& syntax = r.syntax;
  const std::string_view bytes = text.substr(from, until - from);
  if (r.tracker) {
    auto& tracker = *r.tracker;
    tracker.see(text);
    if (r.repairing) {
      reader::opening_container listener{tracker, r};
      syntax.feed(bytes, from, listener);
    } else {
      syntax.feed(bytes, from, tracker);
    }
    if (tracker.dead()) {
      if (r.repairing && tracker.token_end() != std::string_view::npos) {
        r.settle_from = tracker.token_end();
        read_json(std::max(from, tracker.token_end()), until, die);
        return;
      }
      schema_death(tracker.dead_at());
    }
  } else {
    reader::no_schema listener;
    syntax.feed(bytes, from, listener);
  }
  if (syntax.state() == detail::stream::json_prefix::standing::broken && !r.repairing) {
    die(failure_category::syntax, syntax.broken_at(),
        [&] { return fmt::format("not JSON: no JSON text has byte {} there", syntax.broken_at()); });
  }
  if (r.repairing && syntax.state() != detail::stream::json_prefix::standing::open) r.declined = true;
}

LLMDLQ_INLINE const stream_verdict& stream_judge::refuse(std::string message) {
  if (!verdict_.dead) {
    verdict_ = stream_verdict{};
    verdict_.dead = true;
    verdict_.category = failure_category::refusal;
    verdict_.offset = received_.empty() ? 0 : received_.size() - 1;
    verdict_.message = "the API reported a refusal: " + message;
    if (config_.metrics) config_.metrics->count_stream_death(verdict_.category, received_.size());
  }
  context_.refusal = std::move(message);
  return verdict_;
}

LLMDLQ_INLINE std::optional<boost::json::value> stream_judge::partial() const {
  return detail::stream::partial_document(received_);
}

LLMDLQ_INLINE void stream_judge::cancel(std::optional<std::uint64_t> tokens) {
  if (verdict_.dead) context_.cancelled_at = cancel_point{verdict_.offset, tokens};
}

LLMDLQ_INLINE expected<accepted, envelope> stream_judge::finish(std::string_view finish_reason) {
  if (!finish_reason.empty()) context_.finish_reason = std::string(finish_reason);
  if (!context_.cancelled_at || verdict_.category == failure_category::refusal) {
    return process_llm_response(received_, *schema_, context_, config_);
  }
  // Closed at its verdict, the text is the start of an answer already lost:
  // judged whole it would only say that it ends early. Poison, which bytes
  // past the verdict may hold, ranks above the verdict.
  process_config uncounted = config_;
  uncounted.metrics.reset();
  const auto whole = process_llm_response(received_, *schema_, context_, uncounted);
  if (!whole && whole.error().failure.category == failure_category::poison) {
    return process_llm_response(received_, *schema_, context_, config_);
  }
  failure_report failure;
  failure.category = verdict_.category;
  failure.message = fmt::format("the streamed answer was closed at byte {}: {}", verdict_.offset, verdict_.message);
  failure.errors = verdict_.errors;
  if (verdict_.category == failure_category::syntax) {
    const text_position at = position_of(received_, verdict_.offset);
    failure.syntax = text_location{verdict_.offset, at.line, at.column};
    failure.repaired_locally = true;  // the rest was never received: only the model can answer again
  }
  return unexpected(make_envelope(std::move(failure), received_, *schema_, context_, config_));
}

LLMDLQ_END_NAMESPACE
