// SPDX-License-Identifier: MIT
// A host of llmdlq::crypto: a key generated in a private folder seals a
// text that opens again, and not for another record.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>

int main() {
  char folder[] = "/tmp/llmdlq-consumer-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return 1;
  const std::filesystem::path keys = std::filesystem::path(folder) / "keys";
  int code = 0;
  if (!llmdlq::file_key_provider::generate(keys, "k1")) {
    code = 2;
  } else {
    const llmdlq::sodium_field_cipher cipher(std::make_shared<llmdlq::file_key_provider>(keys));
    const auto sealed = cipher.seal("id", "raw_response", "the original");
    if (!sealed || cipher.open("id", "raw_response", *sealed).value_or("") != "the original") code = 3;
    if (sealed && cipher.open("other", "raw_response", *sealed)) code = 4;
  }
  std::filesystem::remove_all(folder);
  if (code == 0) std::printf("llmdlq::crypto works\n");
  return code;
}
