// SPDX-License-Identifier: MIT
// An OCR worker's loop: each message's LLM extraction becomes a typed
// Receipt, or a dead letter in the SQLite DLQ; the input offset is committed
// only when one of the two is durable, so a broken answer never blocks the
// partition and nothing is lost when the DLQ is down.
//
//   ocr_worker [DLQ_PATH]        (default: ocr-worker-dlq.db in the current folder)
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <llmdlq/llmdlq.hpp>
#include <llmdlq/sqlite/store.hpp>

// The structure the model must return, described for llmdlq.
enum class Currency { EUR, RUB, LKR };
BOOST_DESCRIBE_ENUM(Currency, EUR, RUB, LKR)

struct Line {
  std::string description;
  double quantity = 0;
  double amount = 0;
};
BOOST_DESCRIBE_STRUCT(Line, (), (description, quantity, amount))

struct Receipt {
  std::string merchant;
  Currency currency = Currency::EUR;
  double total = 0;
  std::vector<Line> items;
  std::optional<std::string> vat_id;
};
BOOST_DESCRIBE_STRUCT(Receipt, (), (merchant, currency, total, items, vat_id))

// A partition's messages, as a Kafka consumer would hand them over.
struct message {
  std::int64_t offset;
  std::string llm_output;
  std::string finish_reason;
};

int main(int argc, char** argv) {
  const std::string dlq_path = argc > 1 ? argv[1] : "ocr-worker-dlq.db";
  auto dlq = llmdlq::sqlite_store::open(dlq_path);
  if (!dlq) {
    std::fprintf(stderr, "cannot open the DLQ: %s\n", dlq.error().message.c_str());
    return 1;
  }

  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";                 // codes such as ocr_structural_broken_json
  const llmdlq::typed_pipeline<Receipt> worker{*dlq, config};  // judged against Receipt's own schema

  const std::vector<message> partition = {
      {1001, R"({"merchant": "Albert Heijn 1423", "currency": "EUR", "total": 3.68,
                 "items": [{"description": "Halfvolle melk 1L", "quantity": 2, "amount": 2.38},
                           {"description": "Appels", "quantity": 1, "amount": 1.30}]})",
       "stop"},
      {1002,
       "```json\n{\"merchant\": \"Пятёрочка\", \"currency\": \"RUB\", \"total\": 89.99, "
       "\"items\": [{\"description\": \"Молоко\", \"quantity\": 1, \"amount\": 89.99}]}\n```",
       "stop"},
      {1003, R"({"merchant": "Keells", "currency": "LKR", "total": "4250.00", "items": []})", "stop"},
      {1004, R"({"merchant": "Jumbo", "currency": "EUR", "total": 12.5, "items": [{"description": "Kaas)", "length"},
      {1005, "I'm sorry, I can't read this receipt.", "stop"},
  };

  std::int64_t committed = -1;
  int accepted = 0, dead = 0;
  for (const auto& m : partition) {
    llmdlq::request_context context;
    context.idempotency_key = "receipts:0:" + std::to_string(m.offset);
    context.finish_reason = m.finish_reason;
    context.origin = {"receipt-processor", "ocr-worker-1", "receipts", 0, m.offset};

    const auto d = worker.handle(m.llm_output, context);
    if (d == llmdlq::disposition::retry) {
      // The DLQ is down: keep the offset, stop this partition, try again later.
      std::printf("offset %lld: DLQ unavailable (%s), will retry\n", static_cast<long long>(m.offset),
                  d.error->message.c_str());
      break;
    }
    if (d.value) {
      const Receipt& receipt = *d.value;
      std::printf("offset %lld: %s, %zu items, total %.2f\n", static_cast<long long>(m.offset),
                  receipt.merchant.c_str(), receipt.items.size(), receipt.total);
      ++accepted;
    } else {
      std::printf("offset %lld: dead-lettered as %s (%s): %s\n", static_cast<long long>(m.offset),
                  std::string(llmdlq::to_string(d.dead_letter->failure.category)).c_str(),
                  d.dead_letter->failure.code.c_str(), d.dead_letter->failure.message.c_str());
      ++dead;
    }
    committed = m.offset;  // commit: the result or its dead letter is durable
  }
  std::printf("committed through offset %lld: %d accepted, %d dead-lettered into %s\n",
              static_cast<long long>(committed), accepted, dead, dlq_path.c_str());
  return accepted == 2 && dead == 3 ? 0 : 1;
}
