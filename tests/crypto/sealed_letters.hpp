// SPDX-License-Identifier: MIT
// Dead letters sealed with a key directory of their own, for the rekey tests.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "llmdlq/crypto/file_key_provider.hpp"
#include "llmdlq/crypto/sodium_field_cipher.hpp"
#include "llmdlq/process.hpp"
#include "support/temp_dir.hpp"

namespace llmdlq::test {

namespace fs = std::filesystem;

struct sealing_setup {
  llmdlq::test::temp_dir scratch;
  fs::path keys = scratch.path() / "keys";
  std::shared_ptr<const llmdlq::sodium_field_cipher> cipher =
      std::make_shared<llmdlq::sodium_field_cipher>(std::make_shared<llmdlq::file_key_provider>(keys));

  sealing_setup() { REQUIRE(llmdlq::file_key_provider::generate(keys, "k1")); }

  [[nodiscard]] llmdlq::process_options options() const {
    llmdlq::process_options o;
    o.cipher = cipher;
    return o;
  }
};

inline std::string raw_of(int i) {
  return R"({"customer": "c)" + std::to_string(i) + R"(", "email": "alice)" + std::to_string(i) +
         R"(@example.com", "iban": "DE44500105175407324931")";  // truncated
}
inline std::string input_of(int i) { return "Invoice " + std::to_string(i) + " for bob" + std::to_string(i) + "@example.org"; }

inline llmdlq::envelope letter(int i, const llmdlq::process_options& options) {
  llmdlq::request_context context;
  context.idempotency_key = "invoice-" + std::to_string(i);
  context.original_input = input_of(i);
  return llmdlq::make_envelope({.category = llmdlq::failure_category::truncated, .message = "cut off"}, raw_of(i),
                               context, options);
}

// Every file of a SQLite database (the file, its WAL and shared memory), as bytes.
inline std::string database_bytes(const fs::path& db) {
  std::string bytes;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    if (fs::exists(db.string() + suffix)) bytes += llmdlq::test::slurp(db.string() + suffix);
  }
  return bytes;
}

// Checks that every record opens to its originals, sealed with `key`.
inline void check_all_open(const llmdlq::envelope& e, const llmdlq::field_cipher& cipher, int i, std::string_view key) {
  INFO("letter " << i);
  REQUIRE(e.raw_response.sealed);
  CHECK(e.raw_response.sealed->key_id == key);
  const auto opened = llmdlq::open_sealed(e, cipher);
  REQUIRE(opened.size() == 2);
  CHECK(opened[0].original.value() == raw_of(i));
  CHECK(opened[1].original.value() == input_of(i));
}

}  // namespace llmdlq::test
