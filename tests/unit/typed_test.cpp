// SPDX-License-Identifier: MIT
// The typed overload and typed_pipeline: a Boost.Describe'd struct is its own schema.
#include <memory>

#include <llmdlq/memory_sink.hpp>
#include <llmdlq/typed.hpp>
#include <llmdlq/typed_partial.hpp>
#include <llmdlq/typed_pipeline.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"

namespace typed_test {

namespace shop {

enum class currency_code { EUR, RUB, LKR };
BOOST_DESCRIBE_ENUM(currency_code, EUR, RUB, LKR)

struct line {
  std::string description;
  double quantity = 0;
  std::optional<std::string> sku;
};
BOOST_DESCRIBE_STRUCT(line, (), (description, quantity, sku))

struct receipt {
  std::string merchant;
  currency_code currency = currency_code::EUR;
  std::int16_t year = 0;
  bool paid_by_card = false;
  std::vector<line> items;
  std::optional<double> tax;
};
BOOST_DESCRIBE_STRUCT(receipt, (), (merchant, currency, year, paid_by_card, items, tax))

// What a receipt's stream has brought so far.
struct receipt_so_far {
  std::optional<std::string> merchant;
  std::optional<currency_code> currency;
  std::optional<std::vector<line>> items;
  std::optional<double> tax;
};
BOOST_DESCRIBE_STRUCT(receipt_so_far, (), (merchant, currency, items, tax))

// The same shapes with what their C++ types cannot say.
struct invoice {
  std::string number;
  std::string issued;
  std::vector<line> lines;
  std::optional<double> discount;
  std::vector<std::string> tags;
};
BOOST_DESCRIBE_STRUCT(invoice, (), (number, issued, lines, discount, tags))

struct misspelt {
  std::string name;
};
BOOST_DESCRIBE_STRUCT(misspelt, (), (name))

struct reshaped {
  std::string name;
};
BOOST_DESCRIBE_STRUCT(reshaped, (), (name))

struct bad_keyword {
  std::string name;
};
BOOST_DESCRIBE_STRUCT(bad_keyword, (), (name))

}  // namespace shop

}  // namespace typed_test

template <>
struct llmdlq::schema_constraints<typed_test::shop::invoice> {
  static constexpr std::string_view json = R"({
    "number": {"pattern": "^INV-\\d{4}\\-\\d+$"},
    "issued": {"format": "date"},
    "lines": {"minItems": 1, "maxItems": 50},
    "discount": {"minimum": 0, "maximum": 100},
    "tags": {"uniqueItems": true, "items": {"minLength": 1}}})";
};
template <>
struct llmdlq::schema_constraints<typed_test::shop::line> {
  static constexpr std::string_view json = R"({"quantity": {"exclusiveMinimum": 0}})";
};
template <>
struct llmdlq::schema_constraints<typed_test::shop::misspelt> {
  static constexpr std::string_view json = R"({"nmae": {"minLength": 1}})";
};
template <>
struct llmdlq::schema_constraints<typed_test::shop::reshaped> {
  static constexpr std::string_view json = R"({"name": {"type": "integer"}})";
};
template <>
struct llmdlq::schema_constraints<typed_test::shop::bad_keyword> {
  static constexpr std::string_view json = R"({"name": {"maxLength": -1}})";
};

namespace typed_test {

TEST_CASE("schema_for derives a strict schema from the struct", "[typed]") {
  const auto& schema = llmdlq::json_schema_for<shop::receipt>();
  CHECK(schema.at("type") == "object");
  CHECK(schema.at("additionalProperties") == false);
  CHECK(schema.at("required") == boost::json::array{"merchant", "currency", "year", "paid_by_card", "items"});
  CHECK(schema.at("properties").at("currency").at("enum") == boost::json::array{"EUR", "RUB", "LKR"});
  CHECK(schema.at("properties").at("year").at("maximum") == 32767);
  CHECK(schema.at("properties").at("items").at("items").at("required") ==
        boost::json::array{"description", "quantity"});
  CHECK(&llmdlq::schema_for<shop::receipt>() == &llmdlq::schema_for<shop::receipt>());  // compiled once
}

TEST_CASE("a valid response becomes the struct", "[typed]") {
  const auto r = llmdlq::process_llm_response<shop::receipt>(
      R"({"merchant": "Пятёрочка", "currency": "RUB", "year": 2026.0, "paid_by_card": true,
          "items": [{"description": "Кефир", "quantity": 2, "sku": "RU-1"}, {"description": "Хлеб", "quantity": 1, "sku": null}],
          "tax": 12.5})",
      {});
  REQUIRE(r.has_value());
  CHECK(r->merchant == "Пятёрочка");
  CHECK(r->currency == shop::currency_code::RUB);
  CHECK(r->year == 2026);
  CHECK(r->paid_by_card);
  REQUIRE(r->items.size() == 2);
  CHECK(r->items[0].sku == "RU-1");
  CHECK_FALSE(r->items[1].sku.has_value());
  CHECK(r->tax == 12.5);
}

TEST_CASE("a response that does not fit the struct is dead-lettered", "[typed]") {
  auto r = llmdlq::process_llm_response<shop::receipt>(
      R"({"merchant": "AH", "currency": "USD", "year": 70000, "paid_by_card": "yes", "items": []})", {});
  REQUIRE_FALSE(r.has_value());
  llmdlq::test::check_envelope(r.error());
  CHECK(r.error().failure.category == llmdlq::failure_category::schema);
  CHECK(r.error().failure.errors.size() == 3);
  r = llmdlq::process_llm_response<shop::receipt>(R"({"merchant": "AH"})", {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().failure.errors[0].message == "missing required property 'currency'");
}

TEST_CASE("typed_pipeline: an accepted response commits and carries its value", "[typed][pipeline]") {
  llmdlq::memory_sink dlq;
  const llmdlq::typed_pipeline<shop::receipt> pipeline{dlq};
  const auto d = pipeline.handle(
      R"({"merchant": "Keells", "currency": "LKR", "year": 2026, "paid_by_card": false, "items": []})", {});
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.accepted.has_value());
  REQUIRE(d.value.has_value());
  CHECK(d.value->merchant == "Keells");
  CHECK(d.value->currency == shop::currency_code::LKR);
  CHECK_FALSE(d.dead_letter.has_value());
  CHECK(dlq.size() == 0);
}

TEST_CASE("typed_pipeline: a response that does not fit T is dead-lettered against T's own schema",
          "[typed][pipeline]") {
  llmdlq::memory_sink dlq;
  const llmdlq::typed_pipeline<shop::receipt> pipeline{dlq};
  llmdlq::request_context context;
  context.idempotency_key = "receipt-7";
  // Valid JSON, but "USD" is not one of the enum's names.
  const auto d = pipeline.handle(
      R"({"merchant": "AH", "currency": "USD", "year": 2026, "paid_by_card": true, "items": []})", context);
  CHECK(d == llmdlq::disposition::commit);
  CHECK_FALSE(d.value.has_value());
  CHECK_FALSE(d.accepted.has_value());
  REQUIRE(d.dead_letter.has_value());
  llmdlq::test::check_envelope(*d.dead_letter);
  CHECK(d.dead_letter->failure.category == llmdlq::failure_category::schema);
  REQUIRE(d.dead_letter->failure.errors.size() == 1);
  CHECK(d.dead_letter->failure.errors[0].instance_path == "/currency");
  CHECK(d.dead_letter->failure.errors[0].schema_path == "/properties/currency/enum");
  REQUIRE(d.stored.has_value());
  CHECK(dlq.find(d.stored->dlq_id).has_value());
}

TEST_CASE("typed_pipeline: a sink failure answers retry, and the retry stores the same dead letter",
          "[typed][pipeline]") {
  auto dlq = std::make_shared<llmdlq::memory_sink>();
  const llmdlq::typed_pipeline<shop::receipt> pipeline{dlq};
  llmdlq::request_context context;
  context.idempotency_key = "receipt-8";
  dlq->fail_next(1);
  auto d = pipeline.handle(R"({"merchant": "AH"})", context);
  CHECK(d == llmdlq::disposition::retry);
  CHECK_FALSE(d.should_commit());
  CHECK_FALSE(d.value.has_value());
  REQUIRE(d.error.has_value());
  CHECK(d.error->code == llmdlq::sink_errc::unavailable);
  REQUIRE(d.dead_letter.has_value());
  const std::string dlq_id = d.dead_letter->dlq_id;
  CHECK(dlq->size() == 0);

  d = pipeline.handle(R"({"merchant": "AH"})", context);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.stored.has_value());
  CHECK(d.stored->dlq_id == dlq_id);
  CHECK(dlq->size() == 1);
}

TEST_CASE("schema_constraints add keywords to the members, checked against the struct", "[typed]") {
  const auto& json = llmdlq::json_schema_for<shop::invoice>();
  CHECK(json.at("properties").at("lines").at("minItems") == 1);
  CHECK(json.at("properties").at("discount").at("anyOf").at(0).at("maximum") == 100);
  CHECK(json.at("properties").at("tags").at("items") == boost::json::object{{"type", "string"}, {"minLength", 1}});
  const auto judge = [](std::string_view raw) { return llmdlq::process_llm_response<shop::invoice>(raw, {}); };
  const auto good = judge(R"({"number": "INV-2026-7", "issued": "2026-12-02", "discount": null, "tags": ["a", "b"],
                              "lines": [{"description": "Thee", "quantity": 2}]})");
  REQUIRE(good.has_value());
  CHECK(good->lines[0].quantity == 2);
  const auto keyword_of = [&](std::string_view raw) {
    const auto r = judge(raw);
    REQUIRE_FALSE(r.has_value());
    REQUIRE_FALSE(r.error().failure.errors.empty());
    return r.error().failure.errors[0].schema_path;
  };
  constexpr std::string_view lines = R"("lines": [{"description": "Thee", "quantity": 2}])";
  CHECK(keyword_of(R"({"number": "INV-2026", "issued": "2026-12-02", "tags": [], )" + std::string(lines) + "}") ==
        "/properties/number/pattern");
  CHECK(keyword_of(R"({"number": "INV-2026-7", "issued": "2026-12-02", "tags": [], "lines": []})") ==
        "/properties/lines/minItems");
  CHECK(keyword_of(R"({"number": "INV-2026-7", "issued": "2026-12-02", "tags": [], "discount": 120, )" +
                   std::string(lines) + "}") == "/properties/discount/anyOf");  // neither a number up to 100 nor null
  CHECK(keyword_of(R"({"number": "INV-2026-7", "issued": "2026-12-02", "tags": ["a", "a"], )" + std::string(lines) +
                   "}") == "/properties/tags/uniqueItems");
  CHECK(keyword_of(R"({"number": "INV-2026-7", "issued": "2026-12-02", "tags": [],
                      "lines": [{"description": "Thee", "quantity": 0}]})") ==
        "/properties/lines/items/properties/quantity/exclusiveMinimum");
  // A constraint on no member, one that would change a member's type, or a keyword
  // with a value JSON Schema does not allow: a programming error, said on first use.
  CHECK_THROWS_WITH(llmdlq::json_schema_for<shop::misspelt>(), Catch::Contains("'nmae' is no member"));
  CHECK_THROWS_WITH(llmdlq::json_schema_for<shop::reshaped>(), Catch::Contains("may not replace 'type'"));
  CHECK_THROWS_WITH(llmdlq::schema_for<shop::bad_keyword>(), Catch::Contains("/properties/name/maxLength"));
}

TEST_CASE("partial_as: a streamed receipt's progress, the members and lines received whole", "[typed][stream]") {
  llmdlq::stream_judge judge(llmdlq::schema_for<shop::receipt>());
  CHECK_FALSE(llmdlq::partial_as<shop::receipt_so_far>(judge).has_value());
  judge.feed(R"({"merchant": "Keells", "currency": "LK)");
  auto so_far = llmdlq::partial_as<shop::receipt_so_far>(judge);
  REQUIRE(so_far.has_value());
  CHECK(so_far->merchant == "Keells");
  CHECK_FALSE(so_far->currency.has_value());
  judge.feed(R"(R", "items": [{"description": "Tea", "quantity": 2}, {"description": "Ri)");
  so_far = llmdlq::partial_as<shop::receipt_so_far>(judge);
  REQUIRE(so_far.has_value());
  CHECK(so_far->currency == shop::currency_code::LKR);
  REQUIRE(so_far->items.has_value());
  REQUIRE(so_far->items->size() == 1);  // the second line is not whole yet
  CHECK(so_far->items->at(0).description == "Tea");
  CHECK_FALSE(so_far->tax.has_value());
}

}  // namespace typed_test
