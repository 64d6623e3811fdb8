// SPDX-License-Identifier: MIT
// kafka_sink: each envelope as a record (to_kafka_record) sent with
// kafka_producer, the producer's errors as sink_errors.
#include "llmdlq/config.hpp"
#include "llmdlq/kafka/sink.hpp"

#include <fmt/format.h>

#include "dlq_dialects.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

sink_errc sink_code(kafka_errc code) noexcept {
  switch (code) {
    case kafka_errc::invalid_configuration: return sink_errc::rejected;
    case kafka_errc::unavailable: return sink_errc::unavailable;
    case kafka_errc::timeout: return sink_errc::timeout;
    case kafka_errc::rejected: return sink_errc::rejected;
    case kafka_errc::fatal: return sink_errc::unavailable;  // the next publish starts a new producer
    case kafka_errc::closed: return sink_errc::closed;
    // A worker's codes; a sink's producer never answers with them.
    case kafka_errc::aborted: return sink_errc::unavailable;
    case kafka_errc::fenced: return sink_errc::rejected;
  }
  return sink_errc::unavailable;
}

sink_error to_sink_error(kafka_error&& e) { return {sink_code(e.code), std::move(e.message)}; }

}  // namespace

namespace {

using kafka_detail::big_endian;

void add_dialects(const envelope& e, const kafka_dlq_dialects& dialects, std::vector<kafka_header>& headers) {
  const auto add = [&](std::string_view name, std::string value) {
    headers.push_back({std::string(name), std::move(value)});
  };
  const std::string failure_class = "llmdlq." + std::string(to_string(e.failure.category));
  const origin_reference& origin = e.origin;
  if (dialects.connect) {
    namespace names = kafka_connect_header_names;
    if (!origin.topic.empty()) add(names::topic, origin.topic);
    if (origin.partition) add(names::partition, std::to_string(*origin.partition));
    if (origin.offset) add(names::offset, std::to_string(*origin.offset));
    if (!origin.service.empty()) add(names::connector_name, origin.service);
    if (!origin.worker.empty()) add(names::task_id, origin.worker);
    add(names::stage, "llmdlq");
    add(names::class_name, "llmdlq");
    add(names::exception_class, failure_class);
    add(names::exception_message, e.failure.message);
  }
  if (dialects.spring) {
    namespace names = spring_dlt_header_names;
    if (!origin.topic.empty()) add(names::original_topic, origin.topic);
    if (origin.partition) add(names::original_partition, big_endian<std::int32_t>(*origin.partition));
    if (origin.offset) add(names::original_offset, big_endian<std::int64_t>(*origin.offset));
    add(names::exception_fqcn, failure_class);
    add(names::exception_message, e.failure.message);
  }
}

}  // namespace

kafka_record to_kafka_record(const envelope& e, std::string topic, const kafka_dlq_dialects& dialects) {
  namespace names = kafka_header_names;
  kafka_record record;
  record.topic = std::move(topic);
  record.key = e.idempotency_key.empty() ? e.dlq_id : e.idempotency_key;
  record.value = serialize(e);
  auto add = [&](std::string_view name, std::string value) {
    record.headers.push_back({std::string(name), std::move(value)});
  };
  add(names::dlq_id, e.dlq_id);
  add(names::category, std::string(to_string(e.failure.category)));
  add(names::triage, std::string(to_string(e.triage.kind)));
  add(names::failure_code, e.failure.code);
  add(names::envelope_version, e.envelope_version);
  if (!e.versions.schema.empty()) add(names::schema_version, e.versions.schema);
  if (!e.origin.topic.empty()) add(names::origin_topic, e.origin.topic);
  if (e.origin.partition) add(names::origin_partition, std::to_string(*e.origin.partition));
  if (e.origin.offset) add(names::origin_offset, std::to_string(*e.origin.offset));
  add_dialects(e, dialects, record.headers);
  return record;
}

kafka_sink::kafka_sink(std::unique_ptr<kafka_producer> producer, std::string topic,
                       kafka_dlq_dialects dialects) noexcept
    : producer_(std::move(producer)), topic_(std::move(topic)), dialects_(dialects) {}
kafka_sink::kafka_sink(kafka_sink&&) noexcept = default;
kafka_sink& kafka_sink::operator=(kafka_sink&&) noexcept = default;
kafka_sink::~kafka_sink() = default;

expected<kafka_sink, sink_error> kafka_sink::open(kafka_sink_options options) {
  if (options.topic.empty()) return unexpected(sink_error{sink_errc::rejected, "kafka: the topic name is empty"});
  auto producer = kafka_producer::open({std::move(options.properties), options.delivery_timeout,
                                        std::move(options.log)});
  if (!producer) return unexpected(to_sink_error(std::move(producer.error())));
  producer->prepare(options.topic);
  return kafka_sink(std::make_unique<kafka_producer>(std::move(*producer)), std::move(options.topic), options.dialects);
}

namespace {
receipt receipt_of(const envelope& e, const kafka_delivery& d) {
  return {e.dlq_id, false, fmt::format("kafka:{}/{}@{}", d.topic, d.partition, d.offset)};
}
}  // namespace

expected<receipt, sink_error> kafka_sink::publish(const envelope& e) {
  if (!producer_) return unexpected(sink_error{sink_errc::closed, "kafka: the sink was moved from"});
  auto delivery = producer_->send(to_kafka_record(e, topic_, dialects_));
  if (!delivery) return unexpected(to_sink_error(std::move(delivery.error())));
  return receipt_of(e, *delivery);
}

expected<std::vector<receipt>, sink_error> kafka_sink::publish_batch(std::span<const envelope> batch) {
  if (!producer_) return unexpected(sink_error{sink_errc::closed, "kafka: the sink was moved from"});
  std::vector<kafka_record> records;
  records.reserve(batch.size());
  for (const auto& e : batch) records.push_back(to_kafka_record(e, topic_, dialects_));
  auto deliveries = producer_->send_batch(records);
  if (!deliveries) return unexpected(to_sink_error(std::move(deliveries.error())));
  std::vector<receipt> receipts;
  receipts.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) receipts.push_back(receipt_of(batch[i], (*deliveries)[i]));
  return receipts;
}

expected<void, sink_error> kafka_sink::flush() {
  if (!producer_) return unexpected(sink_error{sink_errc::closed, "kafka: the sink was moved from"});
  auto flushed = producer_->flush();
  if (!flushed) return unexpected(to_sink_error(std::move(flushed.error())));
  return {};
}

LLMDLQ_END_NAMESPACE
