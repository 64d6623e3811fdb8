// SPDX-License-Identifier: MIT
// A Kafka worker: it reads LLM responses from an input topic, judges each
// with llmdlq::pipeline, produces accepted results to an output topic and
// dead-letters the rest to the DLQ topic with llmdlq::kafka_sink, and commits
// each input offset only once the result or the dead letter is durable. A
// broken answer never blocks its partition; a DLQ or output topic that is
// down keeps the offset where it is. With --moderation-db it also runs the
// moderation consumer, which moves dead letters into a SQLite moderation
// table (status `pending`).
//
//   kafka_worker --bootstrap HOST:PORT [--input T] [--output T] [--dlq T] [--group G]
//                [--moderation-db PATH] [--max-messages N] [--delivery-timeout-ms MS]
//                [-X librdkafka.property=value]...
//   kafka_worker --mock [--moderation-db PATH]
//
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
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <llmdlq/kafka/moderation_consumer.hpp>
#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/llmdlq.hpp>
#include <llmdlq/sqlite/store.hpp>

namespace {

struct settings {
  llmdlq::kafka_properties kafka;  // bootstrap.servers and any -X property, for every client
  std::string input = "receipts-llm-responses";
  std::string output = "receipts-extracted";
  std::string dlq = "receipts-dead-letter-queue";
  std::string group = "receipts-worker";
  std::string moderation_db;
  long max_messages = 0;  // stop after this many commits; 0: run until SIGINT or SIGTERM
  std::chrono::milliseconds delivery_timeout{10000};
};

std::atomic<bool> stopping{false};

void drop_log(const rd_kafka_t*, int, const char*, const char*) {}

int fail(const std::string& why) {
  std::fprintf(stderr, "kafka_worker: %s\n", why.c_str());
  return 1;
}

// The input consumer: a consumer-group member that commits by hand.
rd_kafka_t* input_consumer(const settings& s) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, drop_log);
  char error[512];
  llmdlq::kafka_properties properties = s.kafka;
  properties.insert({{"group.id", s.group}, {"enable.auto.commit", "false"}, {"auto.offset.reset", "earliest"}});
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (consumer == nullptr) return nullptr;
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, s.input.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_subscribe(consumer, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  return consumer;
}

// Puts the partition back at the message, so that it comes again.
void rewind(rd_kafka_t* consumer, const rd_kafka_message_t& m) {
  rd_kafka_topic_partition_list_t* at = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(at, rd_kafka_topic_name(m.rkt), m.partition)->offset = m.offset;
  if (rd_kafka_error_t* error = rd_kafka_seek_partitions(consumer, at, 5000)) rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(at);
}

class worker {
 public:
  worker(const settings& s, const llmdlq::schema& schema, llmdlq::kafka_sink& dlq, llmdlq::process_config config)
      : settings_(s), dlq_(dlq), pipeline_(schema, dlq, std::move(config)) {}

  // Judges one input and makes the outcome durable. False: do not commit.
  bool handle(const rd_kafka_message_t& m) {
    const std::string where = std::string(rd_kafka_topic_name(m.rkt)) + "/" + std::to_string(m.partition) + "@" +
                              std::to_string(m.offset);
    llmdlq::request_context context;
    context.idempotency_key = where;  // the same for every attempt at this input
    context.origin = {"receipt-processor", "kafka-worker", rd_kafka_topic_name(m.rkt), m.partition, m.offset};
    const std::string_view raw(static_cast<const char*>(m.payload), m.payload ? m.len : 0);

    // A dead letter the DLQ did not take is sent again as it was (same dlq_id),
    // so that a delivery that timed out but landed is not stored twice.
    const auto unsent = unsent_.find(where);
    const llmdlq::disposition d = unsent != unsent_.end() ? pipeline_.dead_letter(unsent->second)
                                                          : pipeline_.handle(raw, context);
    if (d == llmdlq::disposition::retry) {
      std::printf("%s retry: %s\n", where.c_str(), d.error->message.c_str());
      if (d.dead_letter) unsent_.insert_or_assign(where, *d.dead_letter);
      return false;
    }
    unsent_.erase(where);
    if (d.dead_letter) {
      std::printf("%s dead-lettered: %s -> %s\n", where.c_str(), d.dead_letter->failure.code.c_str(),
                  d.stored->location.c_str());
      ++dead_lettered;
      return true;
    }
    // Accepted: the result goes to the output topic, keyed by the input, so
    // that a consumer there can drop the duplicates a crash may cause.
    auto sent = dlq_.producer().send({settings_.output, -1, where, d.accepted->json, {}});
    if (!sent) {
      std::printf("%s retry: %s\n", where.c_str(), sent.error().message.c_str());
      return false;
    }
    std::printf("%s accepted -> %s/%d@%lld\n", where.c_str(), sent->topic.c_str(), sent->partition,
                static_cast<long long>(sent->offset));
    return true;
  }

  long dead_lettered = 0;

 private:
  const settings& settings_;
  llmdlq::kafka_sink& dlq_;
  const llmdlq::pipeline pipeline_;
  std::map<std::string, llmdlq::envelope> unsent_;
};

int run(const settings& s) {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["merchant", "total"],
      "properties": {"merchant": {"type": "string"}, "total": {"type": "number", "minimum": 0}}})");
  auto dlq = llmdlq::kafka_sink::open({s.kafka, s.dlq, s.delivery_timeout, {}});
  rd_kafka_t* consumer = input_consumer(s);
  if (!schema || !dlq || consumer == nullptr) return fail(dlq ? "bad consumer settings" : dlq.error().message);
  dlq->producer().prepare(s.output);  // the results go through the DLQ's producer too
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  worker w(s, *schema, *dlq, config);

  // The moderation consumer: in production a service of its own; here a thread.
  std::optional<llmdlq::sqlite_store> table;
  std::atomic<long> moderated{0};
  std::jthread moderation;
  if (!s.moderation_db.empty()) {
    auto opened = llmdlq::sqlite_store::open(s.moderation_db);
    if (!opened) return fail(opened.error().message);
    table.emplace(std::move(*opened));
    auto reader = llmdlq::kafka_moderation_consumer::open(*table, {s.kafka, s.dlq});
    if (!reader) return fail(reader.error().message);
    moderation = std::jthread([&moderated, reader = std::move(*reader)](std::stop_token stop) mutable {
      while (!stop.stop_requested()) {
        const auto r = reader.poll_once(std::chrono::milliseconds(200));
        moderated += static_cast<long>(r.stored + r.duplicates);
      }
    });
  }

  long committed = 0;
  while (!stopping && (s.max_messages == 0 || committed < s.max_messages)) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (w.handle(*m)) {
        // Synchronous. If it fails (a rebalance took the partition), the
        // message comes again: downstream drops the repeat by its key.
        rd_kafka_commit_message(consumer, m, 0);
        ++committed;
      } else {
        rewind(consumer, *m);  // the offset stays; the message comes again after a pause
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);

  // Let the moderation consumer catch up with what this run dead-lettered.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (moderation.joinable() && moderated < w.dead_lettered && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (moderation.joinable()) std::printf("%ld dead letters in the moderation table\n", moderated.load());
  std::printf("%ld inputs committed, %ld dead-lettered\n", committed, w.dead_lettered);
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
  s.kafka["bootstrap.servers"] = rd_kafka_mock_cluster_bootstraps(cluster);
  for (const auto& topic : {s.input, s.output, s.dlq}) rd_kafka_mock_topic_create(cluster, topic.c_str(), 3, 1);

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
    auto producer = llmdlq::kafka_producer::open({s.kafka, s.delivery_timeout, {}});
    for (const auto& [partition, text] : samples) {
      if (!producer || !producer->send({s.input, partition, {}, text, {}})) return fail("cannot fill the input topic");
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
  bool mock = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (arg == "--mock") {
      mock = true;
      continue;
    }
    if (arg == "--bootstrap") s.kafka["bootstrap.servers"] = value;
    else if (arg == "-X" && std::strchr(value, '='))
      s.kafka[std::string(value, std::strchr(value, '='))] = std::strchr(value, '=') + 1;
    else if (arg == "--input") s.input = value;
    else if (arg == "--output") s.output = value;
    else if (arg == "--dlq") s.dlq = value;
    else if (arg == "--group") s.group = value;
    else if (arg == "--moderation-db") s.moderation_db = value;
    else if (arg == "--max-messages") s.max_messages = std::atol(value);
    else if (arg == "--delivery-timeout-ms") s.delivery_timeout = std::chrono::milliseconds(std::atol(value));
    else return fail("unknown option " + arg) + 1;
    ++i;
  }
  std::signal(SIGINT, [](int) { stopping = true; });
  std::signal(SIGTERM, [](int) { stopping = true; });
  if (mock) return run_on_mock(s);
  if (!s.kafka.contains("bootstrap.servers")) return fail("--bootstrap or --mock") + 1;
  return run(s);
}
