// SPDX-License-Identifier: MIT
// Who may own a key directory and its files: the effective user or root,
// below directories no other user can write (unless sticky). Another owner
// could swap `current` for a key of their own and read every original
// sealed afterwards, or swap a key to make the originals unreadable.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "llmdlq/crypto/file_key_provider.hpp"
#include "llmdlq/crypto/sodium_field_cipher.hpp"
#include "support/other_user.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace key_owner_test {

namespace {

using llmdlq::cipher_failure;
using llmdlq::file_key_provider;
using llmdlq::test::give_to;
using llmdlq::test::named;

struct key_directory {
  llmdlq::test::temp_dir scratch;
  std::filesystem::path keys = scratch.path() / "keys";
  std::shared_ptr<const file_key_provider> provider = std::make_shared<file_key_provider>(keys);
  llmdlq::sodium_field_cipher cipher{provider};

  key_directory() {
    REQUIRE(::chmod(scratch.path().c_str(), 0755) == 0);  // whatever the umask
    REQUIRE(file_key_provider::generate(keys, "k1"));
  }
};

}  // namespace

TEST_CASE("crypto keys: a key directory nobody owns is refused, so nobody's key made current never seals",
          "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  key_directory dir;
  const auto sealed = dir.cipher.seal("id-1", "raw_response", "Alice, IBAN DE44500105175407324931");
  REQUIRE(sealed);
  give_to(nobody, dir.keys);
  // As nobody, who owns the directory: a key of their own, made current.
  REQUIRE(llmdlq::test::run_as(nobody, [&] { return file_key_provider::generate(dir.keys, "theirs").has_value(); }));

  const auto resealed = dir.cipher.seal("id-2", "raw_response", "Bob, IBAN DE89370400440532013000");
  REQUIRE_FALSE(resealed);
  CHECK(resealed.error().code == cipher_failure::provider_failed);
  INFO(resealed.error().message);
  CHECK(resealed.error().message.find(dir.keys.string() + " belongs to " + named(nobody) + ", mode 0700") !=
        std::string::npos);
  // Nor is a text sealed before opened with keys nobody could have swapped.
  const auto opened = dir.cipher.open("id-1", "raw_response", *sealed);
  REQUIRE_FALSE(opened);
  CHECK(opened.error().code == cipher_failure::provider_failed);
  CHECK_FALSE(file_key_provider::generate(dir.keys, "k2"));
  CHECK_FALSE(file_key_provider::list(dir.keys));
}

TEST_CASE("crypto keys: a key file or current file nobody owns is refused, even 0600 in root's directory",
          "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  key_directory dir;
  const std::string name = GENERATE(std::string("k1.key"), std::string("current"));
  CAPTURE(name);
  give_to(nobody, dir.keys / name);

  const auto sealed = dir.cipher.seal("id-1", "raw_response", "Alice");
  REQUIRE_FALSE(sealed);
  CHECK(sealed.error().code == cipher_failure::provider_failed);
  INFO(sealed.error().message);
  CHECK(sealed.error().message.find((dir.keys / name).string() + " belongs to " + named(nobody) + ", mode 0600") !=
        std::string::npos);

  give_to({0, 0, "root"}, dir.keys / name);
  CHECK(dir.cipher.seal("id-1", "raw_response", "Alice"));
}

TEST_CASE("crypto keys: a key directory below a directory nobody owns is refused", "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  llmdlq::test::temp_dir scratch;
  const auto theirs = scratch.path() / "theirs";
  std::filesystem::create_directory(theirs);
  REQUIRE(::chmod(theirs.c_str(), 0755) == 0);
  const auto keys = theirs / "keys";
  REQUIRE(file_key_provider::generate(keys, "k1"));
  give_to(nobody, theirs);  // nobody can rename root's directory away and put one of their own in its place

  const auto current = file_key_provider(keys).current_key_id();
  REQUIRE_FALSE(current);
  CHECK(current.error().code == cipher_failure::provider_failed);
  INFO(current.error().message);
  CHECK(current.error().message.find("is in " + theirs.string() + ", which belongs to " + named(nobody)) !=
        std::string::npos);
  CHECK_FALSE(file_key_provider(keys).key("k1"));
}

TEST_CASE("crypto keys: a key directory below one others may write is refused unless that one is sticky",
          "[crypto][keys][owner]") {
  llmdlq::test::temp_dir scratch;
  const auto shared = scratch.path() / "shared";
  std::filesystem::create_directory(shared);
  REQUIRE(::chmod(shared.c_str(), 0777) == 0);
  const auto keys = shared / "keys";

  const auto generated = file_key_provider::generate(keys, "k1");
  REQUIRE_FALSE(generated);
  CHECK(generated.error().code == cipher_failure::provider_failed);
  INFO(generated.error().message);
  CHECK(generated.error().message.find("is in " + shared.string() + ", which has mode 0777") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(keys));

  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  REQUIRE(file_key_provider::generate(keys, "k1"));
  CHECK(file_key_provider(keys).key("k1"));
  REQUIRE(::chmod(shared.c_str(), 0777) == 0);
  CHECK(file_key_provider(keys).key("k1").error().code == cipher_failure::provider_failed);
}

TEST_CASE("crypto keys: shred refuses a key file that is a symbolic link and leaves both as they are",
          "[crypto][keys]") {
  key_directory dir;
  REQUIRE(file_key_provider::generate(dir.keys, "k2", false));
  const auto elsewhere = dir.scratch.path() / "k2.key";
  std::filesystem::rename(dir.keys / "k2.key", elsewhere);
  std::filesystem::create_symlink(elsewhere, dir.keys / "k2.key");
  const std::string bytes = llmdlq::test::slurp(elsewhere);

  const auto shredded = file_key_provider::shred(dir.keys, "k2");
  REQUIRE_FALSE(shredded);
  CHECK(shredded.error().code == cipher_failure::provider_failed);
  CHECK(shredded.error().message.find((dir.keys / "k2.key").string() + " is a symbolic link") != std::string::npos);
  CHECK(std::filesystem::is_symlink(dir.keys / "k2.key"));
  CHECK(llmdlq::test::slurp(elsewhere) == bytes);
  CHECK_FALSE(std::filesystem::exists(dir.keys / "k2.shredded"));
}

TEST_CASE("crypto keys: a key directory that is a symbolic link is refused, one reached through this user's "
          "link or by a relative path is used",
          "[crypto][keys][owner]") {
  key_directory dir;
  const auto link = dir.scratch.path() / "linked";
  std::filesystem::create_symlink(dir.keys, link);
  const auto refused = file_key_provider(link).key("k1");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == cipher_failure::provider_failed);
  CHECK(refused.error().message.find(link.string() + " is a symbolic link: a key directory is opened by its own "
                                     "path only") != std::string::npos);
  CHECK_FALSE(file_key_provider::generate(link, "k2"));
  CHECK_FALSE(std::filesystem::exists(dir.keys / "k2.key"));
  // A link on the way, this user's in a directory only this user may write, is followed.
  const auto parent_link = dir.scratch.path() / "scratch-link";
  std::filesystem::create_symlink(dir.scratch.path(), parent_link);
  CHECK(file_key_provider(parent_link / "keys").key("k1"));
  // A relative path is walked from the working directory; `..` included.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.keys);
  const bool relative = file_key_provider("../keys").key("k1").has_value();
  const bool dot = file_key_provider::list(".").has_value();
  std::filesystem::current_path(cwd);
  CHECK(relative);
  CHECK(dot);
}

}  // namespace key_owner_test
