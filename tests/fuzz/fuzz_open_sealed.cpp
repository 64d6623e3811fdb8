// SPDX-License-Identifier: MIT
// Fuzzing the opening of sealed originals: whatever an envelope's JSON
// holds (sealed fields with wrong keys, random nonces and ciphertexts,
// another record's or field's copy), open_sealed never crashes, and it
// returns a plaintext only for a text that was really sealed.
//
// The keys are fixed: k1 (current) and k2, and k0 shredded. Only two texts
// were ever sealed with them, both for one record (raw_response
// and original_input, below); so any other plaintext, or any opened text of
// another record or field, is a forgery that authenticated.
//
// Input: an envelope's JSON. When it is not one, the bytes instead alter
// the genuine envelope's sealed raw_response (XORed into its decoded
// ciphertext, nonce and, from the third byte on, its length), which must
// then fail to open unless nothing changed.
//
// The corpus's genuine envelope was written by running the harness with
// LLMDLQ_FUZZ_OPEN_SEALED_SEED=FILE.
#include <sodium.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/field_cipher.hpp>
#include <llmdlq/process.hpp>

namespace {

constexpr std::string_view record = "0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b";
constexpr std::string_view raw_original = "{\"card\": \"4111 1111 1111 1111\", \"name\": \"Alice\"";
constexpr std::string_view input_original = "Order by alice@example.com";

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_open_sealed: %s\n", what);
  std::abort();
}

void write_private(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

struct fixture {
  std::filesystem::path keys;
  std::shared_ptr<const llmdlq::sodium_field_cipher> cipher;
  llmdlq::envelope genuine;

  fixture() {
    char folder[] = "/tmp/llmdlq-fuzz-open-sealed-XXXXXX";
    if (::mkdtemp(folder) == nullptr) fail("mkdtemp");
    keys = folder;
    write_private(keys / "k1.key", std::string(32, '\x11'));
    write_private(keys / "k2.key", std::string(32, '\x22'));
    write_private(keys / "k0.shredded", "shredded\n");
    write_private(keys / "current", "k1\n");
    cipher = std::make_shared<llmdlq::sodium_field_cipher>(std::make_shared<llmdlq::file_key_provider>(keys));

    genuine.dlq_id = std::string(record);
    genuine.failure.code = "fuzz_sealed";
    genuine.failure.message = "sealed originals";
    genuine.raw_response = llmdlq::captured_text::of(raw_original);
    genuine.original_input = llmdlq::captured_text::of(input_original);
    auto raw = cipher->seal(record, llmdlq::sealed_raw_response, raw_original);
    auto input = cipher->seal(record, llmdlq::sealed_original_input, input_original);
    if (!raw || !input) fail("cannot seal with the fixed keys");
    genuine.raw_response.sealed = *raw;
    genuine.original_input->sealed = *input;
    if (auto back = llmdlq::parse_envelope(llmdlq::serialize(genuine)); !back) fail(back.error().message.c_str());
    if (const char* seed = std::getenv("LLMDLQ_FUZZ_OPEN_SEALED_SEED")) {
      std::ofstream(seed, std::ios::binary) << llmdlq::serialize(genuine);
    }
  }
  ~fixture() {
    std::error_code ignored;
    std::filesystem::remove_all(keys, ignored);
  }
};

const fixture& setup() {
  static const fixture f;
  return f;
}

// Whatever opened must be one of the two texts sealed, for its record and field.
void check_opened(const llmdlq::envelope& e, const llmdlq::field_cipher& cipher) {
  for (const auto& opened : llmdlq::open_sealed(e, cipher)) {
    if (!opened.original) {
      if (llmdlq::describe(opened.original.error()).empty()) fail("an empty marker");
      continue;
    }
    if (e.dlq_id != record) fail("another record's text opened");
    const std::string_view expected =
        opened.field == llmdlq::sealed_raw_response ? raw_original : input_original;
    if (*opened.original != expected) fail("a forged text opened");
  }
}

std::string decoded(const std::string& base64) {
  std::string bytes(base64.size(), '\0');
  std::size_t size = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), base64.data(), base64.size(),
                        nullptr, &size, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
    fail("the genuine text is not base64");
  }
  bytes.resize(size);
  return bytes;
}

std::string encoded(const std::string& bytes) {
  std::string text(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(text.data(), text.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  text.resize(text.size() - 1);
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fixture& f = setup();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto e = llmdlq::parse_envelope(text)) {
    check_opened(*e, *f.cipher);
    return 0;
  }
  llmdlq::envelope altered = f.genuine;
  llmdlq::sealed_text& sealed = *altered.raw_response.sealed;
  std::string ciphertext = decoded(sealed.ciphertext);
  std::string nonce = decoded(sealed.nonce);
  for (std::size_t i = 0; i < size; ++i) {
    const auto flip = static_cast<char>(data[i]);
    if (i % 2 == 0) {
      ciphertext[(i / 2) % ciphertext.size()] ^= flip;
    } else {
      nonce[(i / 2) % nonce.size()] ^= flip;
    }
  }
  if (size > 2) sealed.length ^= data[2];
  sealed.ciphertext = encoded(ciphertext);
  sealed.nonce = encoded(nonce);
  const auto opened = f.cipher->open(record, llmdlq::sealed_raw_response, sealed);
  // XORs may cancel out: the text is then the genuine one, and opens.
  const bool genuine = sealed == *f.genuine.raw_response.sealed;
  if (opened && !genuine) fail("an altered text opened");
  if (!opened && genuine) fail("the genuine text did not open");
  check_opened(altered, *f.cipher);
  return 0;
}
