// SPDX-License-Identifier: MIT
// The typed overload: a Boost.Describe'd struct is its own schema.
#include <llmdlq/typed.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"

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

}  // namespace shop

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
