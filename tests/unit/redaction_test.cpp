// SPDX-License-Identifier: MIT
// The redactor: what each detector finds and what it leaves, the actions,
// schema- and pointer-chosen values in broken JSON, and envelopes that carry
// no detected value anywhere.
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "catch.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/llmdlq.hpp"
#include "support/envelope_check.hpp"

namespace redaction_test {

namespace {

using llmdlq::pii_kind;
using llmdlq::redaction_action;
using llmdlq::redactor;

const std::string secret(32, 's');

redactor make(llmdlq::redaction_options options) {
  auto r = redactor::create(std::move(options));
  REQUIRE(r.has_value());
  return *r;
}

std::string redacted(std::string_view text) { return redactor::standard().redact_text(text); }

}  // namespace

TEST_CASE("each detector replaces a valid value and names its kind", "[redaction]") {
  struct sample {
    std::string text;
    std::string expected;
  };
  const std::vector<sample> samples = {
      {"mail jan.de-vries+dlq@example.co.uk now", "mail <email> now"},
      {"call +31 6 1234 5678.", "call <phone>."},
      {"call +7 (495) 123-45-67 today", "call <phone> today"},
      {"bel 020-1234567 of", "bel <phone> of"},
      {"IBAN NL91 ABNA 0417 1643 00, thanks", "IBAN <iban>, thanks"},
      {"IBAN:DE89370400440532013000", "IBAN:<iban>"},
      {"card 4111 1111 1111 1111 exp", "card <card> exp"},
      {"card 5500-0000-0000-0004.", "card <card>."},
      {"from 192.168.10.254 at", "from <ipv4> at"},
      {"from 2001:db8::8a2e:370:7334 at", "from <ipv6> at"},
      {"from fe80::1 at", "from <ipv6> at"},
      {"key sk-proj-abcdefghijklmnopqrstuvwx1234", "key <api_key>"},
      {"key AKIAIOSFODNN7EXAMPLE.", "key <api_key>."},
      {"token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token <api_key>"},
      {"Authorization: Bearer abcdef0123456789ABCDEF.xyz", "Authorization: Bearer <bearer_token>"},
      {"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.sig_nature-x", "jwt <api_key>"},
  };
  for (const auto& s : samples) {
    INFO(s.text);
    CHECK(redacted(s.text) == s.expected);
  }
}

TEST_CASE("values that only look like one are left alone", "[redaction]") {
  for (const std::string text : {
           "IBAN NL91 ABNA 0417 1643 01",   // mod-97 fails
           "card 4111 1111 1111 1112",      // Luhn fails
           "order 1234567890123456789012",  // too long for a card
           "version 1.2.3.4.5 and 256.1.1.1",
           "at 12:30:45 on 2026-01-15",
           "total 1.234,56 EUR, 3+4=7",
           "no@domain and a@b.c",
           "sk-short",
           "Bearer short",
           "id 123456782 without a rule",  // a valid BSN, but no national id rule is set
       }) {
    INFO(text);
    CHECK(redacted(text) == text);
  }
}

TEST_CASE("national ids are found by shape and checksum", "[redaction]") {
  const auto r = make({.national_ids = {llmdlq::national_ids::nl_bsn(), llmdlq::national_ids::ru_inn(),
                                        llmdlq::national_ids::ru_snils(), llmdlq::national_ids::lk_nic()}});
  CHECK(r.redact_text("BSN 123456782.") == "BSN <nl_bsn>.");
  CHECK(r.redact_text("BSN 123456783.") == "BSN 123456783.");
  CHECK(r.redact_text("ИНН 7707083893 и 500100732259") == "ИНН <ru_inn> и <ru_inn>");
  CHECK(r.redact_text("ИНН 7707083894") == "ИНН 7707083894");
  CHECK(r.redact_text("СНИЛС 112-233-445 95") == "СНИЛС <ru_snils>");
  CHECK(r.redact_text("СНИЛС 112-233-445 96") == "СНИЛС 112-233-445 96");
  CHECK(r.redact_text("NIC 853400937V / 198534000937") == "NIC <lk_nic> / <lk_nic>");
  CHECK(r.redact_text("NIC 859990937V") == "NIC 859990937V");  // day 999 does not exist

  const auto custom = make({.national_ids = {{"be_nrn", {"##.##.##-###.##"}, [](std::string_view id) {
                              std::string d;
                              for (char c : id) {
                                if (c >= '0' && c <= '9') d += c;
                              }
                              const long long body = std::stoll(d.substr(0, 9));
                              return 97 - body % 97 == std::stoll(d.substr(9));
                            }}}});
  CHECK(custom.redact_text("RRN 85.07.30-033.28") == "RRN <be_nrn>");
  CHECK(custom.redact_text("RRN 85.07.30-033.29") == "RRN 85.07.30-033.29");
}

TEST_CASE("a BSN is read as Dutch documents print it, and a number grouped otherwise is not one", "[redaction]") {
  const auto r = make({.national_ids = {llmdlq::national_ids::nl_bsn()}});
  // Passports, identity cards and driving licences group it 4.2.3 with dots; some forms with spaces.
  CHECK(r.redact_text("BSN 1112.22.333.") == "BSN <nl_bsn>.");
  CHECK(r.redact_text("persoonsnummer 1234.56.782") == "persoonsnummer <nl_bsn>");
  CHECK(r.redact_text("BSN 1112 22 333, geboren") == "BSN <nl_bsn>, geboren");
  CHECK(r.redact_text(R"({"bsn": "1112.22.333"})") == R"({"bsn": "<nl_bsn>"})");
  CHECK(r.redact_text(R"({"bsn": "111222333"})") == R"({"bsn": "<nl_bsn>"})");
  for (const std::string text : {
           "BSN 1112.22.334",                   // the eleven test fails
           "dated 2024.12.31 and 2024 12 31",   // a date: eight digits
           "version 1112.22.333.4",             // a longer dotted number
           "version 7.1112.22.333",             // a longer dotted number, from its start
           "build 1112.22.3330 and 11122.2.333",  // other groupings
           "total EUR 111.222.333 and 1112-22-333",  // an amount's grouping, and dashes
       }) {
    INFO(text);
    CHECK(r.redact_text(text) == text);
  }
}

TEST_CASE("tokens are keyed, stable across spellings, and differ between keys", "[redaction]") {
  const auto a = make({.key = llmdlq::redaction_key{"k1", secret}});
  const auto b = make({.key = llmdlq::redaction_key{"k2", std::string(32, 't')}});
  const std::string one = a.redact_text("NL91ABNA0417164300");
  CHECK(one.starts_with("<iban:"));
  CHECK(one.size() == std::string("<iban:>").size() + 16);
  CHECK(a.redact_text("NL91 ABNA 0417 1643 00") == one);
  CHECK(b.redact_text("NL91ABNA0417164300") != one);
  CHECK(a.redact_text("DE89370400440532013000") != one);
  CHECK(a.redact_text(one) == one);  // idempotent

  std::vector<llmdlq::redaction_summary> report;
  (void)a.redact_text("x NL91ABNA0417164300 y NL91 ABNA 0417 1643 00", "raw_response", &report);
  REQUIRE(report.size() == 1);
  CHECK(report[0].field == "raw_response");
  CHECK(report[0].kind == "iban");
  CHECK(report[0].action == "token");
  CHECK(report[0].count == 2);
  CHECK(report[0].key_id == "k1");
  CHECK(report[0].spans == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{2, 18}, {23, 22}});
}

TEST_CASE("masks keep the last characters, and actions are chosen per kind", "[redaction]") {
  const auto r = make({.actions = {{"card", redaction_action::mask}, {"email", redaction_action::remove}},
                       .mask_keep = 4});
  CHECK(r.redact_text("4111 1111 1111 1111 and a@example.org") == "************1111 and <email>");
  CHECK(redacted(r.redact_text("4111 1111 1111 1111")) == "************1111");
  // Only the letters and digits that end a value are kept: `**a*bc` would read as a mask's end and a word.
  const auto six = make({.action = redaction_action::mask, .mask_keep = 6});
  CHECK(six.redact_text("at 2001:db8::8a2e:370:7334 now") == "at *******************7334 now");
  CHECK(six.redact_text("mail anna@example.co.uk") == "mail ****************uk");
}

TEST_CASE("options that would leak or cannot work are refused", "[redaction]") {
  CHECK(redactor::create({.action = redaction_action::token}).error().option == "key");
  CHECK(redactor::create({.key = llmdlq::redaction_key{"k", "short"}}).error().option == "key");
  CHECK(redactor::create({.key = llmdlq::redaction_key{"", secret}}).error().option == "key");
  CHECK(redactor::create({.mask_keep = 7}).error().option == "mask_keep");
  CHECK(redactor::create({.pointers = {"customer/iban"}}).error().option == "pointers");
  CHECK(redactor::create({.national_ids = {{"x", {}, nullptr}}}).error().option == "national_ids");
}

TEST_CASE("schema-marked and pointer-chosen values go, also in broken JSON", "[redaction]") {
  const auto schema = llmdlq::schema::compile(R"({
    "type": "object",
    "$defs": {"person": {"type": "object", "properties": {"name": {"type": "string", "x-llmdlq-pii": "name"}}}},
    "properties": {
      "customer": {"$ref": "#/$defs/person"},
      "lines": {"type": "array", "items": {"properties": {"note": {"type": "string", "x-llmdlq-pii": true}}}},
      "total": {"type": "number"}
    }
  })");
  REQUIRE(schema.has_value());
  REQUIRE(schema->pii_paths() == std::vector<llmdlq::pii_path>{{"/customer/name", "name"}, {"/lines/*/note", "pii"}});

  const auto r = make({.pointers = {"/total"}});
  std::vector<llmdlq::redaction_summary> report;
  const std::string whole =
      R"({"customer": {"name": "Анна Петрова"}, "lines": [{"note": "ring twice"}, {"note": "x"}], "total": 12.5})";
  CHECK(r.redact_document(whole, schema->pii_paths(), "raw_response", &report) ==
        R"({"customer": {"name": "<name>"}, "lines": [{"note": "<pii>"}, {"note": "<pii>"}], "total": "<pii>"})");
  REQUIRE(report.size() == 3);
  CHECK(report[0].path == "/customer/name");
  CHECK(report[1].path == "/lines/*/note");
  CHECK(report[1].count == 2);
  CHECK(report[2].path == "/total");

  // Fenced, prose around it, and cut off inside the second note.
  const std::string broken =
      "Here you go:\n```json\n{'customer': {\"name\": \"Jan\"}, \"lines\": [{\"note\": \"a\"}, {\"note\": \"ring at 0612345678 and";
  const std::string out = r.redact_document(broken, schema->pii_paths());
  CHECK(out.find("Jan") == std::string::npos);
  CHECK(out.find("ring at") == std::string::npos);
  CHECK(out.find("0612345678") == std::string::npos);
  CHECK(out.starts_with("Here you go:\n```json\n{'customer': {\"name\": \"<name>\"}"));

  // A label is written as a placeholder's kind, which a second pass knows.
  const std::vector<llmdlq::pii_path> labelled = {{"/customer/name", "full name"}};
  CHECK(r.redact_document(R"({"customer": {"name": "Jan"}})", labelled) == R"({"customer": {"name": "<full_name>"}})");
}

TEST_CASE("broken JSON is read the same before and after its values are replaced", "[redaction]") {
  const auto r = make({.pointers = {"/a", "/c/*"}, .key = llmdlq::redaction_key{"k1", secret}});
  const std::vector<std::string> texts = {
      // A password holding a bracket: the walk reads it as one word, as it will its placeholder.
      R"({"a": "x", "b": u://v:]@w, "a": 1})",
      // A container where a key belongs is read as that key, as the string replacing it will be.
      R"({"c": {"k": 1, {"x": 2}"y" z}})",
      // A placeholder's colon does not split the word it is in.
      R"({"c": {key=+31612345678 y, "k": 2}})",
      // A URL's scheme taken by a pointer does not hide its user part on a second pass.
      R"({"a": s://anna@example.com:pw@h})",
  };
  for (const auto& text : texts) {
    INFO(text);
    std::vector<llmdlq::redaction_summary> again;
    const std::string once = r.redact_document(text);
    CHECK(r.redact_document(once, {}, "raw_response", &again) == once);
    CHECK(again.empty());
  }
}

TEST_CASE("a failed response's envelope carries no detected value anywhere", "[redaction]") {
  const auto schema = llmdlq::schema::compile(R"({
    "type": "object", "required": ["total"],
    "properties": {"total": {"type": "number"}, "holder": {"type": "string", "x-llmdlq-pii": true}}
  })");
  REQUIRE(schema.has_value());
  const std::string raw =
      R"({"total": "12,50", "holder": "J. de Vries", "iban": "NL91ABNA0417164300", "mail": "jan@example.nl", )"
      R"("card": "4111111111111111", "jan@example.nl": 1})";
  llmdlq::request_context context;
  context.idempotency_key = "k-1";
  context.original_input = "Factuur, BSN 123456782, kaart 5500 0000 0000 0004, IBAN NL91ABNA0417164300";
  context.extensions["contact"] = "jan@example.nl";
  llmdlq::process_options options;
  options.redaction = make({.national_ids = {llmdlq::national_ids::nl_bsn()}, .key = llmdlq::redaction_key{"k1", secret}});
  const auto result = llmdlq::process_llm_response(raw, *schema, context, options);
  REQUIRE_FALSE(result.has_value());
  const auto& e = result.error();
  llmdlq::test::check_envelope(e);
  const std::string json = llmdlq::serialize(e);
  for (const char* value : {"J. de Vries", "NL91ABNA0417164300", "jan@example.nl", "4111111111111111", "123456782",
                            "5500 0000 0000 0004"}) {
    INFO(value);
    CHECK(json.find(value) == std::string::npos);
  }
  // The hashes and lengths still describe what the model and the host sent.
  CHECK(e.raw_response.length == raw.size());
  CHECK(e.raw_response.sha256 == llmdlq::captured_text::of(raw).sha256);
  CHECK(e.original_input->length == context.original_input.size());
  CHECK_FALSE(e.redactions.empty());
  bool holder = false;
  for (const auto& s : e.redactions) holder = holder || (s.path == "/holder" && s.field == "raw_response");
  CHECK(holder);

  // A second pass finds nothing more.
  auto again = e;
  options.redaction.redact(again, schema->pii_paths());
  CHECK(again == e);
}

TEST_CASE("bytes that are not UTF-8 are redacted before they are stored in base64", "[redaction]") {
  const std::string raw = "\xff\xfe card 4111111111111111 \x80";
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::poison, .message = "binary"}, raw, {});
  REQUIRE(e.raw_response.base64);
  const std::string bytes = llmdlq::detail::base64_decode(*e.raw_response.text);
  CHECK(bytes.find("4111111111111111") == std::string::npos);
  CHECK(bytes.find("<card>") != std::string::npos);
  CHECK(e.raw_response.sha256 == llmdlq::captured_text::of(raw).sha256);
}

TEST_CASE("redactor::none() keeps every text as given", "[redaction]") {
  llmdlq::process_options options;
  options.redaction = redactor::none();
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::poison}, "mail a@example.org", {},
                                       options);
  CHECK(*e.raw_response.text == "mail a@example.org");
  CHECK(e.redactions.empty());
}

namespace {

const redactor& every_rule() {
  static const redactor r = make({.national_ids = {llmdlq::national_ids::nl_bsn(), llmdlq::national_ids::ru_inn()},
                                  .phone_regions = {"US", "RU", "IN", "CN"}});
  return r;
}

}  // namespace

TEST_CASE("values after JSON escapes, in JSON quoted in JSON and in \\u escapes are found, and JSON stays JSON",
          "[redaction]") {
  struct sample {
    std::string text;
    std::string expected;
  };
  const std::vector<sample> samples = {
      {R"({"note": "card:\n4111111111111111 tel:\n+31612345678 iban:\nNL91ABNA0417164300"})",
       R"({"note": "card:\n<card> tel:\n<phone> iban:\n<iban>"})"},
      {R"({"note": "key:\tsk-proj-abcdefghijklmnopqrstuvwx1234\r\n"})", R"({"note": "key:\t<api_key>\r\n"})"},
      {R"({"e": "anna\u0040example.com", "c": "\u0034111111111111111"})", R"({"e": "<email>", "c": "<card>"})"},
      {R"("{\"content\":\"card:\\n4111111111111111 mail:\\nanna@example.com\"}")",
       R"("{\"content\":\"card:\\n<card> mail:\\n<email>\"}")"},
      {R"({"s": "\\\\\\n4111111111111111"})", R"({"s": "\\\\\\n<card>"})"},
      {R"({"n": "\ud83d\udcb3\u00a04111111111111111"})", R"({"n": "\ud83d\udcb3\u00a0<card>"})"},
      {"/iban~1GB82WEST12345698765432", "/iban~1<iban>"},
  };
  for (const auto& s : samples) {
    INFO(s.text);
    CHECK(redacted(s.text) == s.expected);
    if (s.text.front() == '{' || s.text.front() == '"') CHECK_NOTHROW(boost::json::parse(redacted(s.text)));
  }
}

TEST_CASE("a value written as a bare JSON number becomes a string placeholder, so the document stays JSON",
          "[redaction]") {
  const auto& r = llmdlq::redactor::standard();
  struct sample {
    std::string text;
    std::string expected;
  };
  const std::vector<sample> samples = {
      {R"({"card": 4111111111111111, "total": 12})", R"({"card": "<card>", "total": 12})"},
      {R"([4111111111111111 , "x",5555555555554444])", R"(["<card>" , "x","<card>"])"},
      {R"({"a": {"b": [1, 4111111111111111]}})", R"({"a": {"b": [1, "<card>"]}})"},
      // Inside a string, also a top-level one whose brackets are text, it stays as written.
      {R"({"note": "card 4111111111111111, thanks"})", R"({"note": "card <card>, thanks"})"},
      {R"("[4111111111111111]")", R"("[<card>]")"},
      {R"(" [1, 4111111111111111]")", R"(" [1, <card>]")"},
      // A document that is one number becomes one string.
      {"4111111111111111", R"("<card>")"},
      {" 4111111111111111\n", " \"<card>\"\n"},
  };
  for (const auto& s : samples) {
    INFO(s.text);
    const std::string out = r.redact_document(s.text);
    CHECK(out == s.expected);
    CHECK_NOTHROW(boost::json::parse(out));
    CHECK(r.redact_document(out) == out);  // a second pass changes nothing
  }
  CHECK(r.redact_text(R"({"card": 4111111111111111})") == R"({"card": <card>})");
}

TEST_CASE("values in the forms real text writes them are found and still validated", "[redaction]") {
  struct sample {
    std::string text;
    std::string expected;
  };
  const std::vector<sample> samples = {
      {"iban nl91abna0417164300.", "iban <iban>."},
      {"NL91-ABNA-0417-1643-00 / NL91.ABNA.0417.1643.00", "<iban> / <iban>"},
      {"NL91\u00a0ABNA\u00a00417\u00a01643\u00a000 and NL91  ABNA  0417\n1643 00", "<iban> and <iban>"},
      {"card 4111.1111.1111.1111 or 4111\u2009\u20091111 1111\r\n1111", "card <card> or <card>"},
      {"card \uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11",
       "card <card>"},
      {"card 4111 1111 1111 1111 2027", "card <card> 2027"},
      {"**NL91ABNA0417164300** and *4111 1111 1111 1111* and __anna@example.com__", "**<iban>** and *<card>* and __<email>__"},
      {"mailto:anna%40example.com?subject=x and ?email=anna%40example.com&x=1", "mailto:<email>?subject=x and ?email=<email>&x=1"},
      {"anna&#64;example.com, anna&#x40;example.com, anna&commat;example.com", "<email>, <email>, <email>"},
      {"anna@b\u00fccher.de, \u0430\u043d\u043d\u0430@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", "<email>, <email>"},
      {"anna\uff20example.com", "<email>"},
      {"bel **06-12345678** of *+31 6 1234 5678*", "bel **<phone>** of *<phone>*"},
  };
  for (const auto& s : samples) {
    INFO(s.text);
    CHECK(redacted(s.text) == s.expected);
  }
  // Checked as before: the forms do not make ordinary numbers values.
  for (const std::string text : {"nl91abna0417164301", "4111-1111-1111-1112", "**1234 5678**", "100%25 of 4111"}) {
    INFO(text);
    CHECK(redacted(text) == text);
  }
}

TEST_CASE("domestic phone formats are read for the configured regions", "[redaction]") {
  const std::string text = "(415) 555-2671, 415.555.2671, 1-415-555-2671, 8 (916) 123-45-67, 98765 43210, "
                           "138 0013 8000, 13800138000";
  CHECK(every_rule().redact_text(text) == "<phone>, <phone>, <phone>, <phone>, <phone>, <phone>, <phone>");
  CHECK(redacted(text) == text);  // no region configured: none of them has a +, 00 or trunk 0
  const auto us = make({.phone_regions = {"US"}});
  CHECK(us.redact_text("(415) 555-2671 and 98765 43210") == "<phone> and 98765 43210");
  CHECK(us.redact_text("(115) 555-2671, order 415-555-26712") == "(115) 555-2671, order 415-555-26712");
  const auto unknown = redactor::create({.phone_regions = {"XX"}});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().option == "phone_regions");
}

TEST_CASE("secrets: labelled AWS keys, Stripe test and webhook keys, PEM blocks, URL passwords", "[redaction]") {
  struct sample {
    std::string text;
    std::string expected;
  };
  const std::vector<sample> samples = {
      {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
       "aws_secret_access_key = <api_key>\n"},
      {R"({"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})", R"({"SecretAccessKey": "<api_key>"})"},
      {"sk_test_4eC39HqLyjWDarjtT1zdp7dc whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "<api_key> <api_key>"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPH\nCozMxH2Mo4lgOEePzNm0\n-----END RSA PRIVATE KEY-----\nok",
       "<private_key>\nok"},
      {R"({"pem": "-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPH\nCozMx"})", R"({"pem": "<private_key>"})"},
      {"postgres://report:S3cr3t-Passw0rd@db.internal:5432/sales", "postgres://report:<password>@db.internal:5432/sales"},
      {"redis://:hunter2@cache:6379 and https://example.com/a:b@c", "redis://:<password>@cache:6379 and https://example.com/a:b@c"},
      // The user part is read too: it can be an address.
      {"postgres://alice@example.com:s3cret-pw@db.internal:5432/app", "postgres://<email>:<password>@db.internal:5432/app"},
      // A header that names no algorithm is no key's.
      {"-----BEGIN x@y PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPH", "-----BEGIN x@y PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPH"},
  };
  for (const auto& s : samples) {
    INFO(s.text);
    CHECK(redacted(s.text) == s.expected);
  }
  // A 40-character run without its label is any 40 characters.
  CHECK(redacted("commit wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == "commit wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
}

TEST_CASE("a token is of the value as meant: every spelling of one value gives one token", "[redaction]") {
  const auto r = make({.key = llmdlq::redaction_key{"k1", secret}});
  const std::string plain = r.redact_text("4111111111111111");
  CHECK(plain.starts_with("<card:"));
  for (const std::string spelling : {R"(\u0034111111111111111)", "4111-1111-1111-1111", "4111\u00a01111 1111 1111",
                                     "\uff14111111111111111"}) {
    INFO(spelling);
    CHECK(r.redact_text(spelling) == plain);
  }
  CHECK(r.redact_text("NL91ABNA0417164300") == r.redact_text("nl91 abna 0417 1643 00"));
}

TEST_CASE("a second pass over redacted text changes nothing, whatever the action", "[redaction]") {
  const std::vector<std::string> texts = {
      R"({"note": "card:\n4111111111111111 tel:\n+31612345678 iban:\nNL91ABNA0417164300"})",
      "**NL91ABNA0417164300** *4111 1111 1111 1111* mailto:anna%40example.com anna&#64;example.com",
      "(415) 555-2671 8 (916) 123-45-67 postgres://u:pw12345@h/db -----BEGIN PRIVATE KEY-----\nMIIE",
      "4111111111111111 1234 5678 and +31612345678 9 and 4111111111111111@example.com",
      "BSN 111222333 INN 7707083893 fe80::1 192.168.1.1 \\\\n4111111111111111",
  };
  const auto masking = make({.national_ids = {llmdlq::national_ids::nl_bsn()},
                             .phone_regions = {"US", "RU"},
                             .action = redaction_action::mask,
                             .mask_keep = 6});
  const auto tokens = make({.phone_regions = {"US", "RU"}, .key = llmdlq::redaction_key{"k1", secret}});
  for (const redactor* r : {&redactor::standard(), &every_rule(), &masking, &tokens}) {
    for (const auto& text : texts) {
      INFO(text);
      const std::string once = r->redact_text(text);
      CHECK(once != text);
      std::vector<llmdlq::redaction_summary> again;
      CHECK(r->redact_text(once, "text", &again) == once);
      CHECK(again.empty());
      CHECK(r->redact_document(once) == r->redact_document(r->redact_document(once)));
    }
  }
}

TEST_CASE("a number read on into a value redacted after it is no id on a second pass either", "[redaction]") {
  const auto r = make({.national_ids = {llmdlq::national_ids::nl_bsn()}, .key = llmdlq::redaction_key{"k1", secret}});
  // 002828765 and 316123456 pass the eleven test, but each goes on past its colon into a password or an address.
  for (const std::string text : {"postgres://002828765:12345678@db/x", "BSN 316123456:4123k@h.de"}) {
    INFO(text);
    const std::string once = r.redact_text(text);
    CHECK(once != text);
    CHECK(once.find("<nl_bsn:") == std::string::npos);
    std::vector<llmdlq::redaction_summary> again;
    CHECK(r.redact_text(once, "text", &again) == once);
    CHECK(again.empty());
  }
}

TEST_CASE("a mask before a run of colons is read as the address it stands for on a second pass", "[redaction]") {
  const auto masking = make({.action = redaction_action::mask, .mask_keep = 6});
  const std::string text = "from 10.0.0.1" + std::string(46, ':') + "0612 345 678";
  const std::string once = masking.redact_text(text);
  CHECK(once.starts_with("from *******1::"));
  std::vector<llmdlq::redaction_summary> again;
  CHECK(masking.redact_text(once, "text", &again) == once);
  CHECK(again.empty());
}

TEST_CASE("a document that is one bare number stays JSON when the number is an id", "[redaction]") {
  const auto r = make({.national_ids = {llmdlq::national_ids::nl_bsn()}, .key = llmdlq::redaction_key{"k1", secret}});
  const std::string out = r.redact_document("536776519");
  CHECK(out.starts_with("\"<nl_bsn:"));
  CHECK(boost::json::parse(out).is_string());
  CHECK(r.redact_document(out) == out);
  // As text, which need not stay JSON, it is replaced where it stands.
  CHECK(r.redact_text("536776519").starts_with("<nl_bsn:"));
}

TEST_CASE("a quote before a placeholder is its edge only when it quotes the placeholder", "[redaction]") {
  // `"::Ac` became `"<ipv6:…>`: the quote was text before the address, and
  // `463345733 463` reads as one number on both passes, which is no id.
  const auto r = make({.national_ids = {llmdlq::national_ids::nl_bsn()}, .key = llmdlq::redaction_key{"k1", secret}});
  const std::string once = r.redact_text(R"(x@BW8765 463345733 463"::Ac ok)");
  CHECK(once.find("<ipv6:") != std::string::npos);
  std::vector<llmdlq::redaction_summary> again;
  CHECK(r.redact_text(once, "text", &again) == once);
  CHECK(again.empty());
  // A bare value's quoted placeholder still stands for the value's edges.
  const std::string document = r.redact_document(R"({"id": 111222333, "n": 1})");
  CHECK(document.find(R"("<nl_bsn:)") != std::string::npos);
  CHECK(r.redact_document(document) == document);
}

TEST_CASE("text shaped like a placeholder or a mask after a value hides nothing on the first pass", "[redaction]") {
  // A second pass reads a placeholder or a mask as the value it stands for;
  // the first cannot tell them from text written that way, and finds the
  // values before them all the same.
  for (const std::string text :
       {"Call 0612345678:**** thanks", "at ::::0860.211.2.1.10.*********** ok", "at ::0860.211.2.1.10<phone> ok"}) {
    INFO(text);
    const std::string once = redactor::standard().redact_text(text);
    CHECK(once.find("0612345678") == std::string::npos);
    CHECK(once.find("0860.211.2.1.10") == std::string::npos);
  }
}

TEST_CASE("a value found in a number is replaced with the whole number, so that the document stays JSON",
          "[redaction]") {
  // The card number ends where its digits do; the number goes on.
  const std::string text = R"({"n": [4111111111111111.5e3, 1], "m": -4111111111111111.25})";
  const auto tokens = make({.key = llmdlq::redaction_key{"k1", secret}});
  const auto masking = make({.action = redaction_action::mask, .mask_keep = 4});
  for (const redactor* r : {&redactor::standard(), &tokens, &masking}) {
    std::vector<llmdlq::redaction_summary> report;
    const std::string out = r->redact_document(text, {}, "raw_response", &report);
    INFO(out);
    const auto doc = boost::json::parse(out);
    CHECK(doc.at("n").as_array().at(0).is_string());
    CHECK(doc.at("n").as_array().at(1) == 1);
    CHECK(doc.at("m").is_string());
    CHECK(out.find("4111111111111111") == std::string::npos);
    REQUIRE(report.size() == 1);
    CHECK(report[0].count == 2);
    CHECK(r->redact_document(out) == out);
  }
  // The token is of the card number, as where it is written alone.
  CHECK(tokens.redact_document(R"([4111111111111111.5])") == tokens.redact_document(R"([4111111111111111])"));
}

TEST_CASE("a document that is one string stays as written: its brackets are text to the pointers", "[redaction]") {
  const auto r = make({.pointers = {"/a"}, .key = llmdlq::redaction_key{"k1", secret}});
  for (const std::string text : {R"("{a{")", R"("{a: 1}")", R"( "[{\"a\": 2}]")"}) {
    INFO(text);
    CHECK(r.redact_document(text) == text);
  }
  CHECK(r.redact_document(R"({"a": 1})") != R"({"a": 1})");
}

TEST_CASE("a value chosen by its place is gone from the failure's messages too", "[redaction]") {
  const auto schema = llmdlq::schema::compile(R"({
      "type": "object",
      "properties": {"bsn": {"type": "string", "x-llmdlq-pii": "bsn"},
                     "born": {"type": "string", "format": "date", "x-llmdlq-pii": "birth_date",
                              "x-dlq-rule": "not-future"}}})",
                                              {.format_assertion = true});
  REQUIRE(schema.has_value());
  llmdlq::process_options options;
  options.clock = [] { return *llmdlq::parse_rfc3339("2026-12-02T00:00:00Z"); };
  const auto result = llmdlq::process_llm_response(R"({"bsn": 987654321, "born": "2031-05-17"})", *schema, {}, options);
  REQUIRE_FALSE(result.has_value());
  const auto& e = result.error();
  const std::string stored = boost::json::serialize(llmdlq::to_json(e));
  CHECK(e.raw_response.text->find("987654321") == std::string::npos);
  CHECK(stored.find("987654321") == std::string::npos);
  CHECK(stored.find("2031-05-17") == std::string::npos);
  CHECK(e.failure.errors.size() == 2);
  CHECK(stored.find("<bsn>") != std::string::npos);
}

}  // namespace redaction_test
