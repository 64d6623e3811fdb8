// SPDX-License-Identifier: MIT
// The typed overload and typed_pipeline: a Boost.Describe'd struct is its own schema.
#include <memory>

#include <llmdlq/memory_sink.hpp>
#include <llmdlq/typed.hpp>
#include <llmdlq/typed_pipeline.hpp>

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
