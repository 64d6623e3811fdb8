// SPDX-License-Identifier: MIT
// How an object a host keeps for its lifetime (a pipeline) holds a sink:
// referring to one the host keeps alive, or owning one it was handed.
#pragma once

#include <cassert>
#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A sink, held so that it cannot dangle unnoticed. What it is made from
/// decides how it holds the sink:
///
/// - an lvalue (`sink_handle h{dlq}`): a reference; the host keeps `dlq`
///   alive as long as the handle or any copy of it;
/// - an rvalue of a concrete sink type (`*sqlite_store::open(path)`,
///   `std::move(dlq)`): the sink is moved into shared ownership, so a
///   temporary outlives the expression that made it;
/// - a std::shared_ptr or std::unique_ptr to a sink (not null): shared ownership.
///
/// Copies share the sink. A raw pointer is not accepted: pass `*p` to refer
/// to the sink, or a smart pointer to own it.
class sink_handle {
 public:
  sink_handle(sink& s) noexcept : sink_(&s) {}  // NOLINT(google-explicit-constructor): a sink is a handle

  /// Only for an rvalue of a concrete, movable sink type: a moved-from
  /// const object, an abstract `sink&&` or a sink that cannot move (pass a
  /// smart pointer for those) does not compile.
  template <class S>
    requires(!std::is_reference_v<S> && !std::is_const_v<S> && !std::is_abstract_v<S> &&
             std::derived_from<S, sink> && std::move_constructible<S>)
  sink_handle(S&& s)  // NOLINT(google-explicit-constructor, bugprone-forwarding-reference-overload)
      : owner_(std::make_shared<S>(std::move(s))), sink_(owner_.get()) {}

  template <class S>
    requires std::derived_from<S, sink>
  sink_handle(std::shared_ptr<S> s) noexcept  // NOLINT(google-explicit-constructor)
      : owner_(std::move(s)), sink_(owner_.get()) {
    assert(sink_ != nullptr && "llmdlq::sink_handle: a null sink");
  }

  template <class S, class D>
    requires std::derived_from<S, sink>
  sink_handle(std::unique_ptr<S, D>&& s)  // NOLINT(google-explicit-constructor)
      : owner_(std::move(s)), sink_(owner_.get()) {
    assert(sink_ != nullptr && "llmdlq::sink_handle: a null sink");
  }

  /// The same handle, with the name its sink's metrics carry (a bounded set
  /// the host chooses: "primary", "spool"); by default the sink's kind().
  [[nodiscard]] sink_handle named(std::string name) const {
    sink_handle h = *this;
    h.name_ = std::move(name);
    return h;
  }
  [[nodiscard]] std::string_view name() const noexcept { return name_.empty() ? sink_->kind() : name_; }

  [[nodiscard]] sink& get() const noexcept { return *sink_; }
  [[nodiscard]] sink& operator*() const noexcept { return *sink_; }
  [[nodiscard]] sink* operator->() const noexcept { return sink_; }
  /// Whether the handle (with its copies) owns the sink, rather than refers to one.
  [[nodiscard]] bool owning() const noexcept { return owner_ != nullptr; }

 private:
  std::shared_ptr<sink> owner_;  // empty for a reference
  sink* sink_;
  std::string name_;
};

LLMDLQ_END_NAMESPACE
