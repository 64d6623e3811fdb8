// SPDX-License-Identifier: MIT
// `llmdlq redrive` against librdkafka's mock cluster: dead letters whose
// inputs were read from a Kafka topic have those inputs produced again, with
// the link to the letter, and the worker's next failure or success closes
// the loop: a linked letter of its own, the cap of two automated attempts,
// and the redriven letter settled as recovered.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/redrive_source.hpp>
#include <llmdlq/llm/redriver.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace redrive_command_test {

using llmdlq::test::lines_of;
using llmdlq::test::mock_cluster;
using llmdlq::test::read_topic;
using llmdlq::test::run_llmdlq;

namespace {

constexpr const char* inputs = "receipts-llm-responses";

// What the worker does with one input record: its context, linked to the
// letter its headers name when the record came back by a redrive.
llmdlq::request_context context_of(const std::string& key, std::int32_t partition, std::int64_t offset,
                                   const std::vector<llmdlq::kafka_header>& headers = {}) {
  llmdlq::request_context ctx;
  ctx.idempotency_key = key;
  ctx.origin = {"receipt-processor", "worker-1", inputs, partition, offset};
  ctx.versions.schema = "receipt-1";
  if (auto link = llmdlq::kafka_redrive_link(headers)) llmdlq::apply_redrive(ctx, link->link, link->idempotency_key);
  return ctx;
}

// A DLQ of letters, each failed on an input record of the topic, and the worker's schema.
struct redrive_world {
  mock_cluster cluster;
  llmdlq::test::temp_dir dir;
  std::filesystem::path db = dir.path() / "dlq.db";
  std::string store = "sqlite:" + db.string();
  llmdlq::schema schema = *llmdlq::schema::compile(llmdlq::test::replay_schema);
  std::map<std::string, std::string> ids;  // input key → the letter's dlq_id

  redrive_world() { cluster.create_topic(inputs, 2); }

  // Produces an input and dead-letters the worker's answer to it; `stored` keeps the input in the letter.
  // `gone`: the letter names an offset past the record; `elsewhere`: another topic; `at`: another record's place.
  void fail(const std::string& key, const std::string& answer, bool stored = false, bool gone = false,
            const std::string& elsewhere = {}, std::optional<llmdlq::kafka_delivery> at = std::nullopt) {
    auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(10), {}});
    REQUIRE(producer.has_value());
    auto delivered = producer->send({inputs, -1, key, R"({"scan": ")" + key + R"("})", {{"trace", "t-" + key}}});
    REQUIRE(delivered.has_value());
    const auto place = at.value_or(*delivered);
    auto ctx = context_of(inputs + std::string("/") + key, place.partition, gone ? place.offset + 1000 : place.offset);
    if (!elsewhere.empty()) ctx.origin.topic = elsewhere;
    if (stored || !gone) ctx.original_input = R"({"scan": ")" + key + R"("})";  // the input the model saw
    auto letter = llmdlq::process_llm_response(answer, schema, ctx);
    REQUIRE_FALSE(letter.has_value());
    auto dlq = llmdlq::sqlite_store::open(db);
    REQUIRE(dlq.has_value());
    REQUIRE(dlq->publish(letter.error()).has_value());
    ids[key] = letter.error().dlq_id;
    places[key] = *delivered;
  }

  std::map<std::string, llmdlq::kafka_delivery> places;  // input key → where its record went

  std::map<std::string, std::string> statuses() const {
    auto dlq = llmdlq::sqlite_store::open(db, {.read_only = true});
    REQUIRE(dlq.has_value());
    std::map<std::string, std::string> found;
    for (const auto& [key, id] : ids) {
      auto record = dlq->get(id);
      REQUIRE(record.has_value());
      REQUIRE(record->has_value());
      found[key] = std::string(to_string((*record)->status));
    }
    return found;
  }

  [[nodiscard]] std::vector<llmdlq::test::consumed_record> redriven() const {
    std::vector<llmdlq::test::consumed_record> found;
    for (auto& r : read_topic(cluster.bootstrap(), inputs, 2)) {
      if (r.header("llmdlq-redrive-of")) found.push_back(std::move(r));
    }
    return found;
  }

  // Where inputs may go: back to their own topic only.
  std::string allowlist = dir.write("inputs.allow", "kafka:" + cluster.bootstrap() + "/" + inputs + "\n");

  llmdlq::test::tool_run redrive(const std::string& arguments) const {
    return run_llmdlq("redrive " + store + " --kafka " + cluster.bootstrap() + " --allowlist " + allowlist +
                      " --json " + arguments);
  }
};

std::map<std::string, std::string> outcomes_of(const std::string& out) {
  std::map<std::string, std::string> found;
  for (const auto& line : lines_of(out)) {
    if (line.contains("dlq_id")) found[std::string(line.at("dlq_id").as_string())] = line.at("outcome").as_string();
  }
  return found;
}

}  // namespace

TEST_CASE("redrive: inputs go back to their topic with the link, once per attempt, two attempts at most",
          "[kafka][tools][redrive]") {
  redrive_world world;
  world.fail("in-0", llmdlq::test::failing_answer(0));
  world.fail("in-1", llmdlq::test::failing_answer(1));
  world.fail("in-2", llmdlq::test::failing_answer(2), /*stored=*/true, /*gone=*/true);
  world.fail("in-3", llmdlq::test::failing_answer(3), /*stored=*/false, /*gone=*/true);

  // A dry run reads and says, and sends and changes nothing.
  auto run = world.redrive("");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto outcomes = outcomes_of(run.out);
  CHECK(outcomes[world.ids["in-0"]] == "would_send");
  CHECK(outcomes[world.ids["in-2"]] == "would_send");
  CHECK(outcomes[world.ids["in-3"]] == "refused");
  CHECK(world.redriven().empty());
  CHECK(world.statuses()["in-0"] == "pending");

  // The real run: three inputs sent, the fourth named with why.
  run = world.redrive("--execute --rate 0");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto lines = lines_of(run.out);
  outcomes = outcomes_of(run.out);
  CHECK(outcomes[world.ids["in-0"]] == "sent");
  CHECK(outcomes[world.ids["in-1"]] == "sent");
  CHECK(outcomes[world.ids["in-2"]] == "sent");
  CHECK(outcomes[world.ids["in-3"]] == "refused");
  for (const auto& line : lines) {
    if (line.contains("dlq_id") && line.at("dlq_id").as_string() == world.ids["in-3"]) {
      CHECK(line.at("detail").as_string().find("is gone, and the letter stores no original input") !=
            std::string::npos);
    }
  }
  CHECK(world.statuses() == std::map<std::string, std::string>{
                                {"in-0", "redriven"}, {"in-1", "redriven"}, {"in-2", "redriven"}, {"in-3", "pending"}});
  auto sent = world.redriven();
  REQUIRE(sent.size() == 3);
  std::map<std::string, const llmdlq::test::consumed_record*> by_key;
  for (const auto& r : sent) by_key[r.key.value_or("")] = &r;
  // The original record again, key, value and headers, with the link.
  REQUIRE(by_key.contains("in-0"));
  CHECK(by_key["in-0"]->value == R"({"scan": "in-0"})");
  CHECK(by_key["in-0"]->header("trace") == "t-in-0");
  CHECK(by_key["in-0"]->header("llmdlq-redrive-of") == world.ids["in-0"]);
  CHECK(by_key["in-0"]->header("llmdlq-redrive-attempt") == "1");
  CHECK(by_key["in-0"]->header("llmdlq-idempotency-key") == std::string(inputs) + "/in-0");
  // A record that is gone: the stored input, keyed by the letter's key.
  const std::string key2 = std::string(inputs) + "/in-2";
  REQUIRE(by_key.contains(key2));
  CHECK(by_key[key2]->value == R"({"scan": "in-2"})");

  // Nothing is sent twice: redriven letters are not taken again.
  run = world.redrive("--execute --rate 0");
  REQUIRE(run.exit_code == 0);
  CHECK(outcomes_of(run.out) == std::map<std::string, std::string>{{world.ids["in-3"], "refused"}});
  CHECK(world.redriven().size() == 3);

  // The worker reads in-0 back and fails again: a letter of its own, linked, attempt 2.
  const auto& again = *by_key["in-0"];
  // The worker's own key for a record is its position; the header gives back the letter's.
  auto ctx = context_of("its position", again.partition, again.offset, again.headers);
  CHECK(ctx.attempt == 2);
  CHECK(ctx.idempotency_key == std::string(inputs) + "/in-0");
  ctx.original_input = again.value;  // the input the model saw, as for every letter here
  auto second = llmdlq::process_llm_response(llmdlq::test::failing_answer(0), world.schema, ctx);
  REQUIRE_FALSE(second.has_value());
  REQUIRE(second.error().redrive.has_value());
  CHECK(second.error().redrive->of == world.ids["in-0"]);
  CHECK(second.error().redrive->count == 1);
  CHECK(second.error().dlq_id != world.ids["in-0"]);
  llmdlq::test::check_envelope(second.error());
  {
    auto dlq = llmdlq::sqlite_store::open(world.db);
    REQUIRE(dlq.has_value());
    REQUIRE(dlq->publish(second.error()).has_value());
  }
  world.ids["in-0 again"] = second.error().dlq_id;
  // Its redrive is the input's second automated attempt; a third is refused: it goes to a person.
  run = world.redrive("--execute --rate 0 --id " + world.ids["in-0 again"]);
  REQUIRE(run.exit_code == 0);
  CHECK(outcomes_of(run.out)[world.ids["in-0 again"]] == "sent");
  CHECK(world.redriven().size() == 4);
  {
    auto dlq = llmdlq::sqlite_store::open(world.db);
    REQUIRE(dlq.has_value());
    REQUIRE(dlq->act({world.ids["in-0 again"], llmdlq::moderation_action::claim, "ann", "", {}, {}}).has_value());
    REQUIRE(dlq->act({world.ids["in-0 again"], llmdlq::moderation_action::requeue, "ann", "", {}, {}}).has_value());
  }
  run = world.redrive("--execute --rate 0 --id " + world.ids["in-0 again"]);
  REQUIRE(run.exit_code == 0);
  CHECK(outcomes_of(run.out)[world.ids["in-0 again"]] == "spent");
  CHECK(world.redriven().size() == 4);

  // The worker reads in-1 back and succeeds: it notes so, and the next redrive settles the letter.
  const auto& ok = *by_key["in-1"];
  auto ok_ctx = context_of("its position", ok.partition, ok.offset, ok.headers);
  CHECK(ok_ctx.idempotency_key == std::string(inputs) + "/in-1");
  {
    auto state = llmdlq::sqlite_replay_state::open(world.db);
    REQUIRE(state.has_value());
    REQUIRE(llmdlq::note_redrive_success(*state, ok_ctx, llmdlq::test::recovered_answer(1), "worker-1").has_value());
  }
  run = world.redrive("--rate 0");
  REQUIRE(run.exit_code == 0);
  CHECK(lines_of(run.out).back().at("settled") == 1);
  CHECK(world.statuses()["in-1"] == "redriven");  // a dry run settles nothing
  run = world.redrive("--execute --rate 0");
  REQUIRE(run.exit_code == 0);
  CHECK(lines_of(run.out).back().at("settled") == 1);
  CHECK(world.statuses()["in-1"] == "recovered");
  CHECK(world.statuses()["in-2"] == "redriven");
}

TEST_CASE("redrive: an input goes only where the allowlist allows, and only when the record is the letter's",
          "[kafka][tools][redrive]") {
  redrive_world world;
  world.cluster.create_topic("other-inputs", 1);
  world.fail("in-0", llmdlq::test::failing_answer(0));
  // Its letter names the topic other-inputs, which the allowlist does not list.
  world.fail("in-1", llmdlq::test::failing_answer(1), /*stored=*/true, /*gone=*/false, "other-inputs");
  // Its letter names in-0's place, where a record made after a topic was recreated would sit.
  world.fail("in-2", llmdlq::test::failing_answer(2), /*stored=*/true, /*gone=*/false, {}, world.places["in-0"]);
  auto run = world.redrive("--execute --rate 0");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::map<std::string, boost::json::object> by_id;
  for (const auto& line : lines_of(run.out)) {
    if (line.contains("dlq_id")) by_id[std::string(line.at("dlq_id").as_string())] = line;
  }
  CHECK(by_id[world.ids["in-0"]].at("outcome") == "sent");
  CHECK(by_id[world.ids["in-1"]].at("outcome") == "refused");
  CHECK(by_id[world.ids["in-1"]].at("detail").as_string().ends_with("/other-inputs is not on the allowlist " +
                                                                    world.allowlist));
  CHECK(by_id[world.ids["in-2"]].at("outcome") == "sent");
  CHECK(by_id[world.ids["in-2"]].at("from") == "the stored input");  // not in-0's record
  CHECK(world.statuses()["in-1"] == "pending");
}

TEST_CASE("redrive: a link read from headers is taken only when it names a letter", "[kafka][redrive]") {
  using llmdlq::kafka_header;
  const std::string id = "0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b";
  auto link = llmdlq::kafka_redrive_link(std::vector<kafka_header>{
      {"llmdlq-redrive-of", id}, {"llmdlq-redrive-attempt", "2"}, {"llmdlq-idempotency-key", "in/0@7"}});
  REQUIRE(link.has_value());
  CHECK(*link == llmdlq::kafka_redrive{{id, 2}, "in/0@7"});
  auto keyless = llmdlq::kafka_redrive_link(std::vector<kafka_header>{{"llmdlq-redrive-of", id},
                                                                      {"llmdlq-redrive-attempt", "1"}});
  REQUIRE(keyless.has_value());
  CHECK(keyless->idempotency_key.empty());
  for (const auto& headers :
       std::vector<std::vector<kafka_header>>{{{"llmdlq-redrive-of", id}},
                                              {{"llmdlq-redrive-of", "not-an-id"}, {"llmdlq-redrive-attempt", "1"}},
                                              {{"llmdlq-redrive-of", id}, {"llmdlq-redrive-attempt", "0"}},
                                              {{"llmdlq-redrive-of", id}, {"llmdlq-redrive-attempt", "1x"}},
                                              {{"llmdlq-redrive-of", id}, {"llmdlq-redrive-attempt", "4294967295"}},
                                              {{"llmdlq-redrive-of", id}, {"llmdlq-redrive-attempt", "99999999999"}}}) {
    CHECK_FALSE(llmdlq::kafka_redrive_link(headers).has_value());
  }
}

TEST_CASE("redrive: usage errors name what is missing", "[kafka][tools][redrive]") {
  llmdlq::test::temp_dir dir;
  const std::string store = "sqlite:" + (dir.path() / "dlq.db").string();
  const auto allowlist = dir.write("targets.allow", "kafka:127.0.0.1:1/inputs\n");
  auto run = run_llmdlq("redrive " + store);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("redrive needs an allowlist") != std::string::npos);
  run = run_llmdlq("redrive " + store + " --allowlist " + allowlist);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("give --kafka BROKERS") != std::string::npos);
  run = run_llmdlq("redrive " + store + " --allowlist " + allowlist +
                   " --kafka 127.0.0.1:2 --to kafka:127.0.0.1:1/inputs");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--to names another cluster than --kafka") != std::string::npos);
  run = run_llmdlq("redrive kafka:127.0.0.1:1/dlq --kafka 127.0.0.1:1");
  CHECK(run.exit_code == 2);
  run = run_llmdlq("redrive " + store + " --to kafka:127.0.0.1:1/inputs");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("allowlist") != std::string::npos);
}

}  // namespace redrive_command_test
