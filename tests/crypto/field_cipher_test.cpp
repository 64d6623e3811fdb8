// SPDX-License-Identifier: MIT
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "llmdlq/crypto/file_key_provider.hpp"
#include "llmdlq/crypto/sodium_field_cipher.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/redrive_source.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace field_cipher_test {

namespace {

using llmdlq::cipher_failure;

struct key_directory {
  llmdlq::test::temp_dir scratch;
  std::filesystem::path keys = scratch.path() / "keys";
  std::shared_ptr<const llmdlq::file_key_provider> provider = std::make_shared<llmdlq::file_key_provider>(keys);
  std::shared_ptr<const llmdlq::sodium_field_cipher> cipher = std::make_shared<llmdlq::sodium_field_cipher>(provider);

  explicit key_directory(std::string_view first = "k1") {
    REQUIRE(llmdlq::file_key_provider::generate(keys, first));
  }
};

cipher_failure open_failure(const llmdlq::field_cipher& cipher, std::string_view dlq_id, std::string_view field,
                            const llmdlq::sealed_text& sealed) {
  auto opened = cipher.open(dlq_id, field, sealed);
  REQUIRE_FALSE(opened);
  return opened.error().code;
}

// Fails every seal and open, as a key service that is down would.
class unavailable_cipher final : public llmdlq::field_cipher {
 public:
  llmdlq::expected<llmdlq::sealed_text, llmdlq::cipher_error> seal(std::string_view, std::string_view,
                                                                   std::string_view) const override {
    return llmdlq::unexpected(llmdlq::cipher_error{cipher_failure::provider_failed, "k1", "key service down"});
  }
  llmdlq::expected<std::string, llmdlq::cipher_error> open(std::string_view, std::string_view,
                                                           const llmdlq::sealed_text&) const override {
    throw std::runtime_error("key service down");
  }
};

llmdlq::request_context context_with_input(std::string input) {
  llmdlq::request_context context;
  context.idempotency_key = "order-17";
  context.original_input = std::move(input);
  return context;
}

}  // namespace

TEST_CASE("sodium_field_cipher seals a text for one record and field, and opens it", "[crypto]") {
  key_directory dir;
  const auto sealed = dir.cipher->seal("id-1", "raw_response", "Alice, IBAN DE44500105175407324931");
  REQUIRE(sealed);
  CHECK(sealed->key_id == "k1");
  CHECK(sealed->algorithm == "xchacha20poly1305-ietf");
  CHECK(sealed->length == 34);
  CHECK_FALSE(sealed->cut);
  CHECK(sealed->nonce.size() == 32);             // 24 bytes in base64
  CHECK(sealed->ciphertext.size() == 4 * 17);    // 34 bytes and a 16-byte tag in base64
  CHECK(sealed->ciphertext.find("Alice") == std::string::npos);
  const auto opened = dir.cipher->open("id-1", "raw_response", *sealed);
  REQUIRE(opened);
  CHECK(*opened == "Alice, IBAN DE44500105175407324931");

  const auto again = dir.cipher->seal("id-1", "raw_response", "Alice, IBAN DE44500105175407324931");
  REQUIRE(again);
  CHECK(again->nonce != sealed->nonce);  // a fresh nonce per seal
  CHECK(again->ciphertext != sealed->ciphertext);

  const auto empty = dir.cipher->seal("id-1", "original_input", "");
  REQUIRE(empty);
  CHECK(dir.cipher->open("id-1", "original_input", *empty).value() == "");
  const std::string binary("\x00\xff\xfe binary", 10);
  CHECK(dir.cipher->open("id-1", "raw_response", dir.cipher->seal("id-1", "raw_response", binary).value()).value() ==
        binary);
}

TEST_CASE("a sealed text moved, altered or opened with another key does not open", "[crypto]") {
  key_directory dir;
  const auto sealed = dir.cipher->seal("id-1", "raw_response", "the original").value();

  CHECK(open_failure(*dir.cipher, "id-2", "raw_response", sealed) == cipher_failure::forged_or_corrupt);
  CHECK(open_failure(*dir.cipher, "id-1", "original_input", sealed) == cipher_failure::forged_or_corrupt);
  // The pieces of the associated data cannot be shifted into each other.
  CHECK(open_failure(*dir.cipher, "id-1r", "aw_response", sealed) == cipher_failure::forged_or_corrupt);

  for (std::size_t at = 0; at < sealed.ciphertext.size(); ++at) {
    auto flipped = sealed;
    flipped.ciphertext[at] = flipped.ciphertext[at] == 'A' ? 'B' : 'A';
    const auto opened = dir.cipher->open("id-1", "raw_response", flipped);
    REQUIRE_FALSE(opened);
    CHECK((opened.error().code == cipher_failure::forged_or_corrupt ||
           opened.error().code == cipher_failure::malformed));
  }
  auto other_nonce = sealed;
  other_nonce.nonce = dir.cipher->seal("id-1", "raw_response", "x").value().nonce;
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", other_nonce) == cipher_failure::forged_or_corrupt);

  REQUIRE(llmdlq::file_key_provider::generate(dir.keys, "k2"));
  auto other_key = sealed;
  other_key.key_id = "k2";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", other_key) == cipher_failure::forged_or_corrupt);
  auto longer = sealed;
  longer.length += 1;
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", longer) == cipher_failure::forged_or_corrupt);

  auto unknown = sealed;
  unknown.key_id = "k9";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", unknown) == cipher_failure::unknown_key);
  auto traversal = sealed;
  traversal.key_id = "../k1";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", traversal) == cipher_failure::malformed);
  auto algorithm = sealed;
  algorithm.algorithm = "aes-256-gcm";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", algorithm) == cipher_failure::malformed);
  auto not_base64 = sealed;
  not_base64.ciphertext = "!!!!";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", not_base64) == cipher_failure::malformed);
  auto short_nonce = sealed;
  short_nonce.nonce = "AAAA";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", short_nonce) == cipher_failure::malformed);
  auto no_tag = sealed;
  no_tag.ciphertext = "AAAA";
  CHECK(open_failure(*dir.cipher, "id-1", "raw_response", no_tag) == cipher_failure::malformed);
}

TEST_CASE("file_key_provider keeps keys private and names rotations and shreds", "[crypto]") {
  key_directory dir;
  struct stat status {};
  REQUIRE(::stat(dir.keys.c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0700);
  REQUIRE(::stat((dir.keys / "k1.key").c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0600);
  CHECK(dir.provider->current_key_id().value() == "k1");

  SECTION("a key file or directory others may read is refused") {
    std::filesystem::permissions(dir.keys / "k1.key", std::filesystem::perms::group_read, std::filesystem::perm_options::add);
    auto key = dir.provider->key("k1");
    REQUIRE_FALSE(key);
    CHECK(key.error().code == cipher_failure::provider_failed);
    CHECK_THAT(key.error().message, Catch::Contains("chmod"));
    std::filesystem::permissions(dir.keys / "k1.key", std::filesystem::perms::group_read, std::filesystem::perm_options::remove);
    CHECK(dir.provider->key("k1"));
    std::filesystem::permissions(dir.keys, std::filesystem::perms::others_exec, std::filesystem::perm_options::add);
    CHECK(dir.provider->key("k1").error().code == cipher_failure::provider_failed);
  }
  SECTION("a key file of 32 raw bytes is read as well as base64") {
    const std::string raw(32, '\x5a');
    {
      std::ofstream out(dir.keys / "raw.key", std::ios::binary);
      out << raw;
    }
    std::filesystem::permissions(dir.keys / "raw.key", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    CHECK(dir.provider->key("raw"));
    std::ofstream(dir.keys / "bad.key", std::ios::binary) << "not a key";
    std::filesystem::permissions(dir.keys / "bad.key", std::filesystem::perms::owner_read);
    CHECK(dir.provider->key("bad").error().code == cipher_failure::malformed);
  }
  SECTION("generate refuses an id in use, shredded or not a key id") {
    CHECK(llmdlq::file_key_provider::generate(dir.keys, "k1").error().message == "key k1 exists already");
    CHECK_FALSE(llmdlq::file_key_provider::generate(dir.keys, "../x"));
    CHECK_FALSE(llmdlq::file_key_provider::generate(dir.keys, ".hidden"));
    CHECK_FALSE(llmdlq::file_key_provider::generate(dir.keys, ""));
    CHECK_FALSE(llmdlq::file_key_provider::generate(dir.keys, std::string(65, 'a')));
  }
  SECTION("rotation and shredding") {
    const auto sealed = dir.cipher->seal("id-1", "raw_response", "before rotation").value();
    REQUIRE(llmdlq::file_key_provider::generate(dir.keys, "k2"));
    CHECK(dir.provider->current_key_id().value() == "k2");
    CHECK(dir.cipher->seal("id-1", "raw_response", "after").value().key_id == "k2");
    CHECK(dir.cipher->open("id-1", "raw_response", sealed).value() == "before rotation");

    CHECK(llmdlq::file_key_provider::shred(dir.keys, "k2").error().message ==
          "it is the current key: make another key current first");
    REQUIRE(llmdlq::file_key_provider::shred(dir.keys, "k1"));
    CHECK_FALSE(std::filesystem::exists(dir.keys / "k1.key"));
    CHECK(std::filesystem::exists(dir.keys / "k1.shredded"));
    CHECK(open_failure(*dir.cipher, "id-1", "raw_response", sealed) == cipher_failure::key_shredded);
    CHECK(llmdlq::file_key_provider::shred(dir.keys, "k1"));  // again: nothing more to do
    CHECK(llmdlq::file_key_provider::generate(dir.keys, "k1").error().code == cipher_failure::key_shredded);
    CHECK(llmdlq::file_key_provider::make_current(dir.keys, "k1").error().code == cipher_failure::key_shredded);

    const auto keys = llmdlq::file_key_provider::list(dir.keys).value();
    REQUIRE(keys.size() == 2);
    CHECK((keys[0].id == "k1" && keys[0].shredded && !keys[0].current));
    CHECK((keys[1].id == "k2" && !keys[1].shredded && keys[1].current));
  }
  SECTION("a directory without keys names no current key") {
    llmdlq::file_key_provider empty(dir.scratch.path() / "missing");
    CHECK(empty.current_key_id().error().code == cipher_failure::unknown_key);
    CHECK(llmdlq::sodium_field_cipher(std::make_shared<llmdlq::file_key_provider>(dir.scratch.path() / "missing"))
              .seal("id", "raw_response", "x")
              .error()
              .code == cipher_failure::unknown_key);
  }
}

TEST_CASE("an envelope built with a cipher carries sealed originals that open exactly", "[crypto]") {
  key_directory dir;
  llmdlq::process_options options;
  options.cipher = dir.cipher;
  const std::string raw = R"({"name": "Alice", "iban": "DE44500105175407324931")";  // truncated
  const std::string input = "Invoice for Alice Smith, alice@example.com";
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::truncated, .message = "cut off"}, raw,
                                       context_with_input(input), options);
  llmdlq::test::check_envelope(e);
  REQUIRE(e.raw_response.sealed);
  REQUIRE(e.original_input);
  REQUIRE(e.original_input->sealed);
  CHECK(e.raw_response.sealed->key_id == "k1");
  CHECK_FALSE(e.extensions.contains("llmdlq_seal_error"));

  const auto reread = llmdlq::parse_envelope(llmdlq::serialize(e));
  REQUIRE(reread);
  CHECK(*reread == e);
  const auto opened = llmdlq::open_sealed(*reread, *dir.cipher);
  REQUIRE(opened.size() == 2);
  CHECK(opened[0].field == "raw_response");
  CHECK(opened[0].original.value() == raw);
  CHECK_FALSE(opened[0].cut);
  CHECK(opened[1].field == "original_input");
  CHECK(opened[1].original.value() == input);

  SECTION("a shredded key leaves a marker, and the stored view stays readable") {
    REQUIRE(llmdlq::file_key_provider::generate(dir.keys, "k2"));
    REQUIRE(llmdlq::file_key_provider::shred(dir.keys, "k1"));
    const auto gone = llmdlq::open_sealed(*reread, *dir.cipher);
    REQUIRE(gone.size() == 2);
    REQUIRE_FALSE(gone[0].original);
    CHECK(gone[0].original.error().code == cipher_failure::key_shredded);
    CHECK(llmdlq::describe(gone[0].original.error()) == "sealed with key k1: key shredded (its key was destroyed)");
    CHECK(reread->raw_response.text.has_value());
    CHECK(reread->raw_response.sha256 == e.raw_response.sha256);
  }
  SECTION("a cipher that throws on open is reported, not thrown") {
    const auto failed = llmdlq::open_sealed(*reread, unavailable_cipher());
    REQUIRE(failed.size() == 2);
    CHECK(failed[0].original.error().code == cipher_failure::provider_failed);
    CHECK(failed[0].original.error().message == "key service down");
  }
}

TEST_CASE("sealed originals share max_envelope_bytes with the rest, cut when they must be", "[crypto]") {
  key_directory dir;
  llmdlq::process_options options;
  options.cipher = dir.cipher;
  options.max_envelope_bytes = 64u << 10;
  std::string raw;
  for (int i = 0; raw.size() < 200000; ++i) raw += "{\"line\": " + std::to_string(i) + ", \"text\": \"h\u00e9llo\"}\n";
  const std::string input(1000, 'i');
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, raw,
                                       context_with_input(input), options);
  CHECK(llmdlq::serialize(e).size() <= options.max_envelope_bytes);
  llmdlq::test::check_envelope(e);
  REQUIRE(e.raw_response.sealed);
  CHECK(e.raw_response.sealed->cut);
  REQUIRE(e.original_input->sealed);
  CHECK_FALSE(e.original_input->sealed->cut);  // it needs little: it is kept whole
  const auto opened = llmdlq::open_sealed(e, *dir.cipher);
  REQUIRE(opened.size() == 2);
  CHECK(opened[0].cut);
  const std::string& start = opened[0].original.value();
  CHECK(start.size() > 20000);  // most of the other half
  CHECK(start.size() == e.raw_response.sealed->length);
  CHECK(raw.compare(0, start.size(), start) == 0);
  CHECK(opened[1].original.value() == input);

  SECTION("the smallest limit still holds the envelope") {
    options.max_envelope_bytes = 0;
    const auto small = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax}, raw,
                                             context_with_input(input), options);
    CHECK(llmdlq::serialize(small).size() <= llmdlq::envelope_limits::min_bytes);
    llmdlq::test::check_envelope(small);
    // Each field is sealed in part, or says why it is not.
    for (const auto* text : {&small.raw_response, &*small.original_input}) {
      const std::string field = text == &small.raw_response ? "raw_response" : "original_input";
      INFO(field);
      CHECK((text->sealed || small.extensions.at("llmdlq_seal_error").as_object().contains(field)));
    }
    for (const auto& text : llmdlq::open_sealed(small, *dir.cipher)) {
      const std::string& original = text.field == "raw_response" ? raw : input;
      CHECK(original.compare(0, text.original.value().size(), text.original.value()) == 0);
    }
  }
}

TEST_CASE("a seal that fails keeps the envelope, unsealed, and says why", "[crypto]") {
  llmdlq::process_options options;
  options.cipher = std::make_shared<unavailable_cipher>();
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"},
                                       "oops", context_with_input("the input"), options);
  CHECK_FALSE(e.raw_response.sealed);
  CHECK_FALSE(e.original_input->sealed);
  REQUIRE(e.extensions.contains("llmdlq_seal_error"));
  const auto& note = e.extensions.at("llmdlq_seal_error").as_object();
  CHECK(note.at("raw_response").as_string() == "sealed with key k1: key provider failed (key service down)");
  CHECK(note.contains("original_input"));
  llmdlq::test::check_envelope(e);
}

}  // namespace field_cipher_test

namespace field_cipher_test {

TEST_CASE("stored_original_input gives the input as the model saw it, or says why it cannot", "[crypto][redrive]") {
  key_directory dir;
  const std::string input = "Alice Example, IBAN DE44500105175407324931, total 32,83";
  const auto letter = [&](std::shared_ptr<const llmdlq::field_cipher> cipher, std::string text) {
    llmdlq::process_options options;
    options.cipher = std::move(cipher);
    return llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, "[1",
                                 context_with_input(std::move(text)), options);
  };

  // Redacted (the IBAN) and sealed: only the keys give it back, byte for byte.
  const auto sealed = letter(dir.cipher, input);
  REQUIRE(sealed.original_input->text.has_value());
  CHECK(sealed.original_input->text->find("DE44500105175407324931") == std::string::npos);
  CHECK(llmdlq::stored_original_input(sealed, dir.cipher.get()) == input);
  const auto without_keys = llmdlq::stored_original_input(sealed, nullptr);
  REQUIRE_FALSE(without_keys.has_value());
  CHECK(without_keys.error() == "its original input is redacted, and its sealed copy needs the keys");
  const unavailable_cipher down;
  const auto not_opened = llmdlq::stored_original_input(sealed, &down);
  REQUIRE_FALSE(not_opened.has_value());
  CHECK(not_opened.error().starts_with("its sealed original input does not open: "));

  // Redacted and never sealed: it cannot be had.
  const auto redacted = llmdlq::stored_original_input(letter(nullptr, input), nullptr);
  REQUIRE_FALSE(redacted.has_value());
  CHECK(redacted.error() == "its original input is redacted and was not sealed");

  // Nothing to redact: the stored text is the input; bytes that are not UTF-8 come back from base64.
  CHECK(llmdlq::stored_original_input(letter(nullptr, "total 32,83"), nullptr) == "total 32,83");
  const std::string binary("\xff\xfe total", 8);
  CHECK(llmdlq::stored_original_input(letter(nullptr, binary), nullptr) == binary);

  auto none = letter(nullptr, "x");
  none.original_input.reset();
  CHECK(llmdlq::stored_original_input(none, nullptr).error() == "the letter stores no original input");
  auto cut = letter(nullptr, "total 32,83");
  cut.original_input->cut = true;
  CHECK(llmdlq::stored_original_input(cut, nullptr).error() ==
        "the letter stores only the start of its original input");
  auto hashed = letter(nullptr, "total 32,83");
  hashed.original_input->text.reset();
  CHECK(llmdlq::stored_original_input(hashed, nullptr).error() ==
        "the letter stores only the hash of its original input");
}

}  // namespace field_cipher_test
