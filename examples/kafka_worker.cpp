// SPDX-License-Identifier: MIT
// A Kafka worker: it reads LLM responses from an input topic, judges each
// with llmdlq::pipeline, and writes accepted results to an output topic and
// dead letters to the DLQ topic with llmdlq::kafka_worker, which commits the
// inputs with them. With --transactional-id every batch is one Kafka
// transaction (exactly once: a read_committed consumer of the output and the
// DLQ sees one outcome per input, however often the worker is killed);
// without, the inputs are committed once the outputs are acknowledged (at
// least once). A broken answer never blocks its partition; a DLQ or output
// topic that is down keeps the offsets where they are. With --moderation-db
// it also runs the moderation consumer, which moves dead letters into a
// SQLite moderation table (status `pending`).
//
//   kafka_worker --bootstrap HOST:PORT [--input T] [--output T] [--dlq T] [--group G]
//                [--transactional-id ID] [--batch N] [--moderation-db PATH]
//                [--max-messages N] [--delivery-timeout-ms MS] [-X librdkafka.property=value]...
//   kafka_worker --mock [--moderation-db PATH]
//
// It prints a line per committed input, one per failed batch (`retry:`) and,
// with --transactional-id, one per batch whose commit outlasted the delivery
// timeout (`pending:`; the next poll finishes it).
// --mock starts librdkafka's mock cluster, fills the input topic with a few
// sample responses and stops once they are all committed.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <llmdlq/kafka/moderation_consumer.hpp>
#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/worker.hpp>
#include <llmdlq/llmdlq.hpp>
#include <llmdlq/sqlite/store.hpp>

namespace {

struct settings {
  llmdlq::kafka_worker_options worker;  // bootstrap.servers and any -X property are its properties
  std::string moderation_db;
  long max_messages = 0;  // stop after this many commits; 0: run until SIGINT or SIGTERM
};

std::atomic<bool> stopping{false};

void drop_log(const rd_kafka_t*, int, const char*, const char*) {}

int fail(const std::string& why) {
  std::fprintf(stderr, "kafka_worker: %s\n", why.c_str());
  return 1;
}

int run(settings s) {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["merchant", "total"],
      "properties": {"merchant": {"type": "string"}, "total": {"type": "number", "minimum": 0}}})");
  if (!schema) return fail("bad schema");
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  const llmdlq::pipeline judge(*schema, config);  // no sink: the worker writes the dead letters

  std::vector<std::string> verdicts;  // the batch's, printed once it is committed
  auto worker = llmdlq::kafka_worker::open(
      s.worker, [&](const llmdlq::kafka_input& in) -> llmdlq::expected<llmdlq::kafka_outcome, std::string> {
        llmdlq::request_context context;
        context.idempotency_key = in.position();  // the same for every attempt at this input
        context.origin = {"receipt-processor", "kafka-worker", std::string(in.topic), in.partition, in.offset};
        // An input a redrive sent back keeps its letter's key, and a new failure names the letter.
        if (in.redrive) llmdlq::apply_redrive(context, in.redrive->link, in.redrive->idempotency_key);
        llmdlq::disposition d = judge.handle(in.value, context);
        if (d.accepted) {
          verdicts.push_back(in.position() + " accepted");
          return llmdlq::kafka_outcome::accept(std::move(d.accepted->json));
        }
        verdicts.push_back(in.position() + " dead-lettered: " + d.dead_letter->failure.code);
        return llmdlq::kafka_outcome::reject(std::move(*d.dead_letter));
      });
  if (!worker) return fail(worker.error().message);

  // The moderation consumer: in production a service of its own; here a thread.
  std::optional<llmdlq::sqlite_store> table;
  std::atomic<long> moderated{0};
  std::jthread moderation;
  if (!s.moderation_db.empty()) {
    auto opened = llmdlq::sqlite_store::open(s.moderation_db);
    if (!opened) return fail(opened.error().message);
    table.emplace(std::move(*opened));
    auto reader = llmdlq::kafka_moderation_consumer::open(*table, {s.worker.properties, s.worker.dlq_topic});
    if (!reader) return fail(reader.error().message);
    moderation = std::jthread([&moderated, reader = std::move(*reader)](std::stop_token stop) mutable {
      while (!stop.stop_requested()) {
        const auto r = reader.poll_once(std::chrono::milliseconds(200));
        moderated += static_cast<long>(r.stored + r.duplicates);
      }
    });
  }

  long committed = 0;
  long dead_lettered = 0;
  while (!stopping && (s.max_messages == 0 || committed < s.max_messages)) {
    const auto done = worker->poll_once(std::chrono::milliseconds(200));
    if (!done && done.error().code == llmdlq::kafka_errc::timeout && worker->exactly_once()) {
      // The commit goes on: the next poll finishes it, and keeps or rewinds the batch.
      std::printf("batch of %zu pending: %s\n", verdicts.size(), done.error().message.c_str());
      continue;
    }
    if (!done) {
      std::printf("batch of %zu retry: %s\n", verdicts.size(), done.error().message.c_str());
      verdicts.clear();
      if (done.error().code == llmdlq::kafka_errc::fenced) return 1;  // another instance has our id
      std::this_thread::sleep_for(std::chrono::milliseconds(500));    // the inputs come again after a pause
      continue;
    }
    for (const auto& line : verdicts) std::printf("%s\n", line.c_str());
    verdicts.clear();
    committed += static_cast<long>(done->committed());
    dead_lettered += static_cast<long>(done->dead_lettered);
  }
  worker->close();

  // Let the moderation consumer catch up with what this run dead-lettered.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (moderation.joinable() && moderated < dead_lettered && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (moderation.joinable()) std::printf("%ld dead letters in the moderation table\n", moderated.load());
  std::printf("%ld inputs committed, %ld dead-lettered\n", committed, dead_lettered);
  return s.max_messages == 0 || committed == s.max_messages ? 0 : 1;
}

// --mock: a one-broker mock cluster with the three topics and sample responses.
int run_on_mock(settings s) {
  using namespace std::string_literals;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, drop_log);
  char error[512];
  rd_kafka_t* owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  rd_kafka_mock_cluster_t* cluster = owner ? rd_kafka_mock_cluster_new(owner, 1) : nullptr;
  if (cluster == nullptr) return fail("no mock cluster");
  s.worker.properties["bootstrap.servers"] = rd_kafka_mock_cluster_bootstraps(cluster);
  for (const auto& topic : {s.worker.input_topic, s.worker.output_topic, s.worker.dlq_topic}) {
    rd_kafka_mock_topic_create(cluster, topic.c_str(), 3, 1);
  }

  const std::vector<std::pair<int, std::string>> samples = {
      {0, "{\"merchant\": \"Albert Heijn\0\", \"total\": 1}"s},  // poison: a NUL byte
      {0, R"({"merchant": "Albert Heijn", "total": 23.47})"},
      {0, R"({"merchant": "Jumbo", "total": 8.10,})"},       // trailing comma: repaired
      {1, R"({"merchant": "Keells", "total": "4250.00"})"},  // schema: total is a string
      {1, "```json\n{\"merchant\": \"Lidl\", \"total\": 3.99}\n```"},
      {2, R"({"merchant": "Пятёрочка", "total": 13)"},  // cut off
      {2, "I'm sorry, I can't read this receipt."},
  };
  {
    auto producer = llmdlq::kafka_producer::open({s.worker.properties, s.worker.delivery_timeout, {}});
    for (const auto& [partition, text] : samples) {
      if (!producer || !producer->send({s.worker.input_topic, partition, {}, text, {}}))
        return fail("cannot fill the input topic");
    }
  }
  s.max_messages = static_cast<long>(samples.size());
  const int status = run(s);
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(owner);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per input, as it happens, also into a file
  settings s;
  s.worker.delivery_timeout = std::chrono::milliseconds(10000);
  bool mock = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (arg == "--mock") {
      mock = true;
      continue;
    }
    auto& w = s.worker;
    if (arg == "--bootstrap") w.properties["bootstrap.servers"] = value;
    else if (arg == "-X" && std::strchr(value, '='))
      w.properties[std::string(value, std::strchr(value, '='))] = std::strchr(value, '=') + 1;
    else if (arg == "--input") w.input_topic = value;
    else if (arg == "--output") w.output_topic = value;
    else if (arg == "--dlq") w.dlq_topic = value;
    else if (arg == "--group") w.group = value;
    else if (arg == "--transactional-id") w.transactional_id = value;
    else if (arg == "--batch") w.max_batch = static_cast<std::size_t>(std::atol(value));
    else if (arg == "--moderation-db") s.moderation_db = value;
    else if (arg == "--max-messages") s.max_messages = std::atol(value);
    else if (arg == "--delivery-timeout-ms") w.delivery_timeout = std::chrono::milliseconds(std::atol(value));
    else return fail("unknown option " + arg) + 1;
    ++i;
  }
  std::signal(SIGINT, [](int) { stopping = true; });
  std::signal(SIGTERM, [](int) { stopping = true; });
  if (mock) return run_on_mock(s);
  if (!s.worker.properties.contains("bootstrap.servers")) return fail("--bootstrap or --mock") + 1;
  return run(s);
}
