// SPDX-License-Identifier: MIT
// Definitions for stream_judge.hpp: the byte screens (size, injection
// markers) over the new bytes, and, without local repair, json_prefix with
// the schema tracker listening.
#pragma once

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/schema_access.hpp"
#include "llmdlq/detail/json/prefix_scanner.hpp"
#include "llmdlq/detail/stream/partial_document.hpp"
#include "llmdlq/detail/stream/schema_tracker.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

// What the judge reads the bytes with, when the options make them matter.
struct stream_judge::reader {
  explicit reader(const schema& s, bool follow_schema) {
    if (follow_schema) tracker.emplace(detail::schema_access::of(s));
  }

  // json_prefix's listener: the tracker's, or nothing to say.
  struct no_schema {
    static bool value_begins(detail::stream::value_kind, std::size_t) noexcept { return true; }
    static bool element_begins(std::size_t) noexcept { return true; }
    static bool key_begins(std::size_t) noexcept { return true; }
    static bool key_ends(std::size_t, std::size_t) noexcept { return true; }
    static bool leaf_ends(detail::stream::value_kind, std::size_t, std::size_t) noexcept { return true; }
    static bool container_ends(std::size_t) noexcept { return true; }
  };

  detail::stream::json_prefix syntax;
  std::optional<detail::stream::schema_tracker> tracker;
};

LLMDLQ_INLINE stream_judge::stream_judge(const schema& schema, request_context context, process_config config)
    : schema_(&schema), context_(std::move(context)), config_(std::move(config)) {
  if (config_.judging.repair == repair_mode::off) reader_ = std::make_unique<reader>(schema, !config_.judging.coerce);
  longest_marker_ = longest_injection_marker(config_.judging.guard);
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
    first = stream_verdict{true, category, offset, std::string(message())};
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
  // Strict JSON, read on from where the last bytes left it, up to the
  // earliest death so far.
  if (reader_) {
    const std::size_t until = first ? first->offset + 1 : text.size();
    const std::string_view bytes = text.substr(from, until - from);
    auto& syntax = reader_->syntax;
    if (reader_->tracker) {
      auto& tracker = *reader_->tracker;
      tracker.see(text);
      syntax.feed(bytes, from, tracker);
      if (tracker.dead()) {
        die(tracker.semantic() ? failure_category::semantic : failure_category::schema, tracker.dead_at(), [&] {
          const std::string& at = tracker.where();
          return fmt::format("{} error at {}: {}", tracker.semantic() ? "content" : "schema", at.empty() ? "/" : at,
                             tracker.why());
        });
      }
    } else {
      reader::no_schema listener;
      syntax.feed(bytes, from, listener);
    }
    if (syntax.state() == detail::stream::json_prefix::standing::broken) {
      die(failure_category::syntax, syntax.broken_at(),
          [&] { return fmt::format("not JSON: no JSON text has byte {} there", syntax.broken_at()); });
    }
  }
  if (!first) return;
  verdict_ = std::move(*first);
  if (config_.metrics) config_.metrics->count_stream_death(verdict_.category, verdict_.offset + 1);
}

LLMDLQ_INLINE const stream_verdict& stream_judge::refuse(std::string message) {
  if (!verdict_.dead) {
    verdict_ = stream_verdict{true, failure_category::refusal, received_.empty() ? 0 : received_.size() - 1,
                              "the API reported a refusal: " + message};
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
  return process_llm_response(received_, *schema_, context_, config_);
}

LLMDLQ_END_NAMESPACE
