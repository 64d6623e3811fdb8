// SPDX-License-Identifier: MIT
// Personal data and secrets written the ways model replies and the inputs
// they quote write them — after a JSON escape, in JSON quoted in JSON, with
// `\u` escapes, grouped, full-width, in Markdown, percent-encoded, as HTML
// references, as an object's key — go through `llmdlq process` into a real
// SQLite file and a real JSON Lines file: no value may be left in the
// stored bytes, clear or JSON-escaped, nor on standard output.
#include <filesystem>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "catch.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace redaction_corpus_test {

using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

// A value, and how a text writes it.
struct written_value {
  std::string name;
  std::string value;    // as a reader means it
  std::string written;  // as the text spells it
};

std::string nbsp(std::string_view groups) {  // spaces made no-break spaces
  std::string out;
  for (const char c : groups) out += c == ' ' ? std::string("\u00a0") : std::string(1, c);
  return out;
}

std::string full_width(std::string_view ascii) {
  std::string out;
  for (const char c : ascii) {
    const char32_t cp = c == ' ' ? U' ' : char32_t(0xFF00 + (c - 0x20));
    if (cp == U' ') {
      out += ' ';
      continue;
    }
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
  return out;
}

const std::string pem_body =
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
    "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n"
    "zGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE\n";

std::vector<written_value> values() {
  std::vector<written_value> v = {
      {"e-mail", "anna.petrova@example.ru", "anna.petrova@example.ru"},
      {"e-mail, percent-encoded", "anna.petrova@example.ru", "mailto:anna.petrova%40example.ru"},
      {"e-mail in a query string", "anna.petrova@example.ru", "https://crm.example/find?email=anna.petrova%40example.ru&x=1"},
      {"e-mail, HTML reference", "anna.petrova@example.ru", "anna.petrova&#64;example.ru"},
      {"e-mail, hex HTML reference", "anna.petrova@example.ru", "anna.petrova&#x40;example.ru"},
      {"e-mail, full-width at", "anna.petrova@example.ru", "anna.petrova\uff20example.ru"},
      {"e-mail, IDN domain", "anna@b\u00fccher-versand.de", "anna@b\u00fccher-versand.de"},
      {"e-mail, Markdown", "anna.petrova@example.ru", "**anna.petrova@example.ru**"},
      {"card", "4111111111111111", "4111111111111111"},
      {"card, spaces", "4111111111111111", "4111 1111 1111 1111"},
      {"card, dashes", "4111111111111111", "4111-1111-1111-1111"},
      {"card, dots", "4111111111111111", "4111.1111.1111.1111"},
      {"card, no-break spaces", "4111111111111111", nbsp("4111 1111 1111 1111")},
      {"card, double spaces", "4111111111111111", "4111  1111  1111  1111"},
      {"card, line breaks", "4111111111111111", "4111\n1111\n1111\n1111"},
      {"card, full-width digits", "4111111111111111", full_width("4111111111111111")},
      {"card, Markdown", "4111111111111111", "**4111 1111 1111 1111**"},
      {"card, then a year", "5500000000000004", "5500 0000 0000 0004 2027"},
      {"IBAN", "NL91ABNA0417164300", "NL91ABNA0417164300"},
      {"IBAN, grouped", "NL91ABNA0417164300", "NL91 ABNA 0417 1643 00"},
      {"IBAN, lowercase", "nl91abna0417164300", "nl91abna0417164300"},
      {"IBAN, dashes", "NL91ABNA0417164300", "NL91-ABNA-0417-1643-00"},
      {"IBAN, dots", "NL91ABNA0417164300", "NL91.ABNA.0417.1643.00"},
      {"IBAN, no-break spaces", "NL91ABNA0417164300", nbsp("NL91 ABNA 0417 1643 00")},
      {"IBAN, line break", "GB82WEST12345698765432", "GB82 WEST 1234\n5698 7654 32"},
      {"IBAN, Markdown", "GB82WEST12345698765432", "**GB82WEST12345698765432**"},
      {"IBAN, full-width", "GB82WEST12345698765432", full_width("GB82WEST12345698765432")},
      {"phone, international", "+31612345678", "+31612345678"},
      {"phone, international grouped", "+31 6 1234 5678", "+31 6 1234 5678"},
      {"phone, trunk 0", "06-12345678", "06-12345678"},
      {"phone, US", "(415) 555-2671", "(415) 555-2671"},
      {"phone, US dashes", "415-555-2671", "415-555-2671"},
      {"phone, Russian", "8 (916) 123-45-67", "8 (916) 123-45-67"},
      {"phone, Indian", "98765 43210", "98765 43210"},
      {"phone, Chinese", "138 0013 8000", "138 0013 8000"},
      {"OpenAI key", "sk-proj-Xy7abcdefghijklmnopqrstuv0123456789", "sk-proj-Xy7abcdefghijklmnopqrstuv0123456789"},
      {"Anthropic key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"},
      {"GitHub token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
      {"AWS access key id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
      {"AWS secret key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
      {"Stripe test key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
      {"Stripe webhook secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
      {"JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
      {"bearer token", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
      {"PEM private key", "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw",
       "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body + "-----END RSA PRIVATE KEY-----"},
      {"PEM private key, cut off", "zGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW",
       "-----BEGIN PRIVATE KEY-----\n" + pem_body},
      {"database URL password", "S3cr3t-Passw0rd", "postgres://report:S3cr3t-Passw0rd@db.internal:5432/sales"},
      {"Redis URL password", "hunter2hunter2", "redis://:hunter2hunter2@cache.internal:6379/0"},
      {"BSN", "111222333", "BSN 111222333"},
      {"INN", "7707083893", "INN 7707083893"},
      {"SNILS", "112-233-445 95", "СНИЛС 112-233-445 95"},
      {"NIC", "851234567V", "NIC 851234567V"},
      {"IPv4", "192.168.10.254", "192.168.10.254"},
      {"IPv6", "2001:db8:85a3::8a2e:370:7334", "2001:db8:85a3::8a2e:370:7334"},
  };
  return v;
}

// A value as stored text may spell it: as meant, as written, and each JSON-escaped.
std::vector<std::string> spellings(const written_value& v) {
  std::vector<std::string> out;
  for (const std::string& s : {v.value, v.written}) {
    if (s.find("://") != std::string::npos) continue;  // a URL's other parts stay: only its password is the value
    if (s.rfind("BSN ", 0) == 0 || s.rfind("INN ", 0) == 0 || s.rfind("NIC ", 0) == 0) continue;
    if (s.find("Bearer ") != std::string::npos || s.find("aws_secret") != std::string::npos) continue;
    if (s.find("-----BEGIN") != std::string::npos || s.find("mailto:") != std::string::npos) continue;
    std::string escaped = boost::json::serialize(boost::json::value(s));
    out.push_back(s);
    out.push_back(escaped.substr(1, escaped.size() - 2));
  }
  return out;
}

struct corpus_case {
  std::string name;
  std::vector<std::string> forbidden;
  std::string line;  // the input line for `llmdlq process`
};

std::string line_of(boost::json::object o) { return boost::json::serialize(o) + "\n"; }

std::vector<corpus_case> corpus() {
  std::vector<corpus_case> cases;
  int n = 0;
  auto add = [&](std::string name, std::vector<std::string> forbidden, boost::json::object line) {
    line["id"] = ++n;
    cases.push_back({std::move(name), std::move(forbidden), line_of(std::move(line))});
  };
  for (const auto& v : values()) {
    const auto forbidden = spellings(v);
    const std::string multi_line = "Here is what I found:\n" + v.written + "\nPlease check.";
    // A failed reply whose string holds the value after a line break (written as `\n` in the JSON).
    add(v.name + " in a reply's multi-line string", forbidden,
        {{"response", boost::json::serialize(boost::json::object{{"note", multi_line}, {"total", "12,50"}})}});
    // The same as the input the model saw, as plain text.
    add(v.name + " in the input, after a line break", forbidden,
        {{"response", "{\"total\": \"x\"}"}, {"input", "Customer wrote:\n" + v.written}});
    // A chat transcript serialised as the input: JSON inside the string.
    const boost::json::object transcript{
        {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", multi_line}}}}};
    add(v.name + " in a serialised chat transcript", forbidden,
        {{"response", "{\"total\": \"x\"}"}, {"input", boost::json::serialize(transcript)}});
    // A key the schema forbids: the value reaches the error's instance path and message.
    add(v.name + " in an object's key", forbidden,
        {{"response", boost::json::serialize(boost::json::object{{"ref/" + v.written, 1}, {"total", 1}})}});
  }
  // The shapes as the failure reports gave them, written by hand.
  add("four values after \\n escapes",
      {"4111111111111111", "+31612345678", "NL91ABNA0417164300", "sk-proj-abcdefghijklmnopqrstuvwx1234"},
      {{"response", "{\"note\": \"card:\\n4111111111111111 tel:\\n+31612345678 iban:\\nNL91ABNA0417164300 "
                    "key:\\nsk-proj-abcdefghijklmnopqrstuvwx1234\", \"total\": \"x\"}"}});
  add("values written with \\u escapes", {"anna.petrova", "111111111111111", "ABNA0417164300"},
      {{"response", "{\"email\": \"anna.petrova\\u0040example.ru\", \"card\": \"\\u0034111111111111111\", "
                    "\"iban\": \"NL91\\u0041BNA0417164300\", \"total\": \"x\"}"}});
  add("a value written with a surrogate pair beside it", {"4111111111111111"},
      {{"response", "{\"note\": \"\\ud83d\\udcb3 4111111111111111\", \"total\": \"x\"}"}});
  add("JSON quoted three times", {"4111111111111111", "anna.petrova@example.ru"},
      {{"response", "{\"total\": \"x\"}"},
       {"input", "{\"outer\": \"{\\\"inner\\\": \\\"card\\\\n4111111111111111 mail\\\\nanna.petrova@example.ru\\\"}\"}"}});
  add("the key iban/GB82WEST12345698765432", {"GB82WEST12345698765432"},
      {{"response", "{\"iban/GB82WEST12345698765432\": true, \"total\": 1}"}});
  return cases;
}

std::string all_bytes(const std::filesystem::path& dir) {
  std::string bytes;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += slurp(entry.path());
  }
  return bytes;
}

}  // namespace

TEST_CASE("redaction corpus: no value reaches a SQLite or JSONL DLQ or stdout", "[tools][process][redaction]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object", "required": ["total"],
      "properties": {"total": {"type": "number"}, "note": {"type": "string"}}, "additionalProperties": false})");
  const auto cases = corpus();
  REQUIRE(cases.size() >= 100);
  std::string input;
  for (const auto& c : cases) input += c.line;
  const std::string stdin_path = dir.write("responses.jsonl", input);
  const std::string flags = " --national-ids all --phone-regions US,RU,IN,CN --schema " + schema;

  std::filesystem::create_directory(dir.path() / "sqlite");
  std::filesystem::create_directory(dir.path() / "jsonl");
  const auto sqlite_run =
      run_llmdlq_reading("process --sink sqlite:" + (dir.path() / "sqlite" / "dlq.db").string() + flags, stdin_path);
  const auto jsonl_run =
      run_llmdlq_reading("process --sink jsonl:" + (dir.path() / "jsonl" / "dlq.jsonl").string() + flags, stdin_path);
  REQUIRE(sqlite_run.exit_code == 0);
  REQUIRE(jsonl_run.exit_code == 0);
  // Every line became a stored dead letter: the bytes checked below hold them all.
  const std::string totals = std::to_string(cases.size()) + " lines, 0 accepted, " + std::to_string(cases.size()) +
                             " dead-lettered, " + std::to_string(cases.size()) + " stored";
  CHECK(sqlite_run.err.find(totals) != std::string::npos);
  CHECK(jsonl_run.err.find(totals) != std::string::npos);

  const std::string sqlite_bytes = all_bytes(dir.path() / "sqlite");
  const std::string jsonl_bytes = all_bytes(dir.path() / "jsonl");
  REQUIRE(jsonl_bytes.find("\"redactions\"") != std::string::npos);
  std::vector<std::string> leaks;
  for (const auto& c : cases) {
    for (const auto& value : c.forbidden) {
      for (const auto& [where, bytes] : {std::pair{"sqlite", &sqlite_bytes}, std::pair{"jsonl", &jsonl_bytes},
                                         std::pair{"stdout", &sqlite_run.out}}) {
        if (bytes->find(value) != std::string::npos) leaks.push_back(c.name + ": '" + value + "' in " + where);
      }
    }
  }
  CAPTURE(leaks);
  CHECK(leaks.empty());
}

TEST_CASE("redaction corpus: a line over --max-line-bytes keeps its prefix redacted", "[tools][process][redaction]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const std::string note = "card:\n4111111111111111 mail:\nanna.petrova@example.ru iban:\nNL91ABNA0417164300 " +
                           std::string(4096, 'x');
  const std::string line = boost::json::serialize(boost::json::object{
                               {"response", boost::json::serialize(boost::json::object{{"note", note}})}}) +
                           "\n";
  const auto db = (dir.path() / "dlq.db").string();
  const auto run = run_llmdlq_reading("process --max-line-bytes 1K --sink sqlite:" + db + " --schema " + schema,
                                      dir.write("in.jsonl", line));
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("\"category\":\"poison\"") != std::string::npos);
  std::string bytes;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().string().find("dlq.db") != std::string::npos) bytes += slurp(entry.path());
  }
  REQUIRE(bytes.find("<card>") != std::string::npos);  // the prefix is stored, redacted
  for (const std::string value : {"4111111111111111", "anna.petrova@example.ru", "NL91ABNA0417164300"}) {
    CHECK(bytes.find(value) == std::string::npos);
  }
}

TEST_CASE("process --national-ids: ids written as documents print them are stored redacted",
          "[tools][process][redaction]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object", "required": ["total"]})");
  struct id_case {
    std::string rules;
    std::string member;
    std::string written;
    std::string placeholder;
  };
  for (const auto& c : std::vector<id_case>{{"nl_bsn", "bsn", "111222333", "<nl_bsn>"},
                                            {"nl_bsn", "bsn", "1112.22.333", "<nl_bsn>"},
                                            {"nl_bsn", "bsn", "1234 56 782", "<nl_bsn>"},
                                            {"ru_snils", "snils", "112-233-445 95", "<ru_snils>"},
                                            {"lk_nic", "nic", "853400937V", "<lk_nic>"}}) {
    INFO(c.written);
    const auto dlq = dir.path() / (c.member + std::to_string(c.written.size()) + ".jsonl");
    const std::string response = boost::json::serialize(boost::json::object{{c.member, c.written}});
    const auto run = run_llmdlq_reading(
        "process --national-ids " + c.rules + " --sink jsonl:" + dlq.string() + " --schema " + schema,
        dir.write("in.jsonl", boost::json::serialize(boost::json::object{{"response", response}}) + "\n"));
    REQUIRE(run.exit_code == 0);
    CHECK(run.out.find("\"stored\":true") != std::string::npos);
    const std::string stored = slurp(dlq);
    CHECK(stored.find(c.placeholder) != std::string::npos);
    CHECK(stored.find(c.written) == std::string::npos);
    CHECK(run.out.find(c.written) == std::string::npos);
  }
}

}  // namespace redaction_corpus_test
