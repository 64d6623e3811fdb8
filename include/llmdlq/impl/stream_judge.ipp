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
#include "llmdlq/detail/stream/json_prefix.hpp"
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

LLMDLQ_INLINE stream_judge::stream_judge(const schema& schema, request_context context, process_options options)
    : schema_(&schema), context_(std::move(context)), options_(std::move(options)) {
  if (options_.repair == repair_mode::off) reader_ = std::make_unique<reader>(schema, !options_.coerce);
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
  auto die = [&](failure_category category, std::size_t offset, std::string message) {
    verdict_.dead = true;
    verdict_.category = category;
    verdict_.offset = offset;
    verdict_.message = std::move(message);
  };
  const std::string_view text = received_;
  // poison: the parser refuses a text over the size limit, whatever it holds.
  if (text.size() > options_.limits.max_size) {
    return die(failure_category::poison, options_.limits.max_size,
               fmt::format("the response is longer than the limit of {} bytes", options_.limits.max_size));
  }
  // poison: a marker in the new bytes, or across their start.
  if (const std::size_t longest = longest_injection_marker(options_.guard); longest != 0) {
    const std::size_t window = from > longest - 1 ? from - (longest - 1) : 0;
    if (auto found = find_injection(text.substr(window), options_.guard)) {
      const std::size_t at = window + found->offset;
      return die(failure_category::poison, at, fmt::format("prompt-injection marker at offset {}", at));
    }
  }
  if (!reader_) return;
  // Strict JSON, read on from where the last bytes left it.
  auto& syntax = reader_->syntax;
  if (reader_->tracker) {
    auto& tracker = *reader_->tracker;
    tracker.see(text);
    syntax.feed(text.substr(from), from, tracker);
    if (tracker.dead()) {
      const std::string& at = tracker.where();
      return die(tracker.semantic() ? failure_category::semantic : failure_category::schema, tracker.dead_at(),
                 fmt::format("{} error at {}: {}", tracker.semantic() ? "content" : "schema", at.empty() ? "/" : at,
                             tracker.why()));
    }
  } else {
    reader::no_schema listener;
    syntax.feed(text.substr(from), from, listener);
  }
  if (syntax.state() == detail::stream::json_prefix::standing::broken) {
    die(failure_category::syntax, syntax.broken_at(),
        fmt::format("not JSON: no JSON text has byte {} there", syntax.broken_at()));
  }
}

LLMDLQ_INLINE expected<accepted, envelope> stream_judge::finish(std::string_view finish_reason) {
  if (!finish_reason.empty()) context_.finish_reason = std::string(finish_reason);
  return process_llm_response(received_, *schema_, context_, options_);
}

LLMDLQ_END_NAMESPACE
