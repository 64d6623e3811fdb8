// SPDX-License-Identifier: MIT
// A replay_state whose operations are another's: the SQL back-ends' public
// types, whose operations are the shared SQL's (replay_state_sql.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

class delegating_replay_state : public replay_state {
 public:
  [[nodiscard]] expected<void, replay_state_error> acquire_lease(std::string_view name, std::string_view owner,
                                                                 std::chrono::seconds ttl) override {
    return target().acquire_lease(name, owner, ttl);
  }
  [[nodiscard]] expected<void, replay_state_error> release_lease(std::string_view name,
                                                                 std::string_view owner) override {
    return target().release_lease(name, owner);
  }
  [[nodiscard]] expected<bool, replay_state_error> claim(std::string_view work, std::string_view owner,
                                                         std::chrono::seconds ttl) override {
    return target().claim(work, owner, ttl);
  }
  [[nodiscard]] expected<void, replay_state_error> release_claim(std::string_view work,
                                                                 std::string_view owner) override {
    return target().release_claim(work, owner);
  }
  [[nodiscard]] expected<void, replay_state_error> release_all(std::string_view owner) override {
    return target().release_all(owner);
  }
  [[nodiscard]] expected<std::optional<std::string>, replay_state_error> load_cursor(std::string_view name) override {
    return target().load_cursor(name);
  }
  [[nodiscard]] expected<void, replay_state_error> store_cursor(std::string_view lease, std::string_view owner,
                                                                std::string_view name,
                                                                std::string_view position) override {
    return target().store_cursor(lease, owner, name, position);
  }
  [[nodiscard]] expected<std::uint32_t, replay_state_error> attempts(std::string_view idempotency_key) override {
    return target().attempts(idempotency_key);
  }
  [[nodiscard]] expected<std::uint32_t, replay_state_error> reserve_attempt(std::string_view idempotency_key,
                                                                            std::uint32_t max_attempts) override {
    return target().reserve_attempt(idempotency_key, max_attempts);
  }
  [[nodiscard]] expected<void, replay_state_error> release_attempt(std::string_view idempotency_key) override {
    return target().release_attempt(idempotency_key);
  }
  [[nodiscard]] expected<call_hold, replay_state_error> record_call_failure(std::string_view key, timestamp not_before,
                                                                            std::string_view error) override {
    return target().record_call_failure(key, not_before, error);
  }
  [[nodiscard]] expected<call_hold, replay_state_error> hold(std::string_view key) override {
    return target().hold(key);
  }
  [[nodiscard]] expected<void, replay_state_error> clear_hold(std::string_view key) override {
    return target().clear_hold(key);
  }
  [[nodiscard]] expected<ledger_entry, replay_state_error> record_output(std::string_view idempotency_key,
                                                                         std::string_view source,
                                                                         std::string_view dlq_id,
                                                                         std::string_view output) override {
    return target().record_output(idempotency_key, source, dlq_id, output);
  }
  [[nodiscard]] expected<std::optional<ledger_entry>, replay_state_error> find_output(
      std::string_view idempotency_key) override {
    return target().find_output(idempotency_key);
  }
  [[nodiscard]] expected<void, replay_state_error> mark_delivered(std::string_view idempotency_key) override {
    return target().mark_delivered(idempotency_key);
  }
  [[nodiscard]] expected<std::vector<ledger_entry>, replay_state_error> undelivered(std::string_view source,
                                                                                    std::size_t limit) override {
    return target().undelivered(source, limit);
  }

 private:
  /// The replay_state that carries the operations out.
  [[nodiscard]] virtual replay_state& target() noexcept = 0;
};

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
