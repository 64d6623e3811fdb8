// SPDX-License-Identifier: MIT
// The bounded reader every whole-file read goes through: at most the limit
// and one byte are read, from a file, a pipe or a device, and a refusal
// says which file, of which kind, over which limit.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "catch.hpp"
#include "llmdlq/detail/bounded_read.hpp"
#include "support/temp_dir.hpp"

namespace bounded_read_test {

using llmdlq::detail::file_kind;
using llmdlq::detail::read_bounded;
using llmdlq::detail::read_errc;
using llmdlq::detail::read_file_bounded;

TEST_CASE("read_bounded: a file of the limit is read whole, one byte more is refused", "[bounded_read]") {
  llmdlq::test::temp_dir dir;
  const auto exact = dir.write("exact", std::string(4096, 'k'));
  const auto over = dir.write("over", std::string(4097, 'k'));
  const auto read = read_file_bounded(exact, file_kind::key);
  REQUIRE(read);
  CHECK(read->size() == 4096);
  const auto refused = read_file_bounded(over, file_kind::key);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == read_errc::too_large);
  CHECK(refused.error().kind == file_kind::key);
  CHECK(refused.error().file == over);
  CHECK(refused.error().limit == 4096);
  CHECK(refused.error().reason == "larger than the limit of 4 KiB");
  CHECK(refused.error().message == "the key file " + over + " is larger than the limit of 4 KiB");
  // A limit of the caller's, for the same kind.
  CHECK(read_file_bounded(over, file_kind::document, 5000));
  CHECK(read_file_bounded(over, file_kind::document, 1000).error().message ==
        "the document " + over + " is larger than the limit of 1000 bytes");
}

TEST_CASE("read_bounded: a device or a pipe without end is read up to the limit and one byte", "[bounded_read]") {
  const auto zeros = read_file_bounded("/dev/zero", file_kind::allowlist);
  REQUIRE_FALSE(zeros);
  CHECK(zeros.error().message == "the allowlist /dev/zero is larger than the limit of 1 MiB");

  // A writer that never stops, on a socket (its writes fail, without a signal, once the reader leaves).
  int ends[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0);
  std::thread writer([&] {
    const std::string piece(1000, 'x');
    while (::send(ends[1], piece.data(), piece.size(), MSG_NOSIGNAL) > 0) {
    }
  });
  const auto piped = read_bounded(ends[0], file_kind::key, "-");
  ::shutdown(ends[0], SHUT_RDWR);
  writer.join();
  ::close(ends[0]);
  ::close(ends[1]);
  REQUIRE_FALSE(piped);
  CHECK(piped.error().code == read_errc::too_large);
  CHECK(piped.error().message == "the key file on standard input is larger than the limit of 4 KiB");
}

TEST_CASE("read_bounded: a file that cannot be opened or read says why", "[bounded_read]") {
  llmdlq::test::temp_dir dir;
  const auto missing = (dir.path() / "missing.json").string();
  const auto absent = read_file_bounded(missing, file_kind::schema);
  REQUIRE_FALSE(absent);
  CHECK(absent.error().code == read_errc::cannot_open);
  CHECK(absent.error().system_error == ENOENT);
  CHECK(absent.error().message == "cannot read the schema " + missing + ": No such file or directory");
  const auto directory = read_file_bounded(dir.path(), file_kind::schema);
  REQUIRE_FALSE(directory);
  CHECK(directory.error().code == read_errc::cannot_read);
  CHECK(directory.error().reason == "Is a directory");
}

TEST_CASE("byte_count_text names a limit as a person reads it", "[bounded_read]") {
  using llmdlq::detail::byte_count_text;
  CHECK(byte_count_text(std::size_t{64} << 20) == "64 MiB");
  CHECK(byte_count_text(std::size_t{1} << 30) == "1 GiB");
  CHECK(byte_count_text(4096) == "4 KiB");
  CHECK(byte_count_text(1000) == "1000 bytes");
  CHECK(byte_count_text(1) == "1 byte");
}

}  // namespace bounded_read_test
