// SPDX-License-Identifier: MIT
// A worker that streams its model calls: each answer is judged as it
// arrives, and the connection is closed at the first byte no accepted answer
// can follow, so the rest is neither generated nor paid for. The answers
// are recorded ones (responses.jsonl), replayed by the local model server
// (`answer verbatim:`) as a model with structured outputs would stream them:
// strict JSON, so local repair is off and a fence or prose is fatal at once.
//
//   streamed_batch MODEL_URL SCHEMA RESPONSES DLQ_PATH
//
// Prints what happened and the tokens the server generated against those
// its whole answers hold, as the server itself counted them (GET /stats).
// Exits 1 when a call fails, or the server saw none of the client's cuts.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <httplib.h>
#include <llmdlq/llm/openai_compatible_client.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/sqlite/store.hpp>

namespace {

struct batch_totals {
  int streamed = 0, accepted = 0, dead_lettered = 0, cut_early = 0, call_failures = 0;
};

std::string read_all(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The server's own count of what it streamed so far.
struct server_counts {
  std::int64_t closed_early = 0, tokens_sent = 0, tokens_in_answers = 0;
};

std::optional<server_counts> server_stats(const std::string& model_url) {
  const auto origin = model_url.substr(0, model_url.find('/', model_url.find("//") + 2));
  httplib::Client http(origin);
  const auto reply = http.Get(model_url.substr(origin.size()) + "/stats");
  if (!reply || reply->status != 200) return std::nullopt;
  const auto stats = boost::json::parse(reply->body).as_object();
  return server_counts{stats.at("closed_early").to_number<std::int64_t>(),
                       stats.at("tokens_sent").to_number<std::int64_t>(),
                       stats.at("tokens_in_answers").to_number<std::int64_t>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: streamed_batch MODEL_URL SCHEMA RESPONSES DLQ_PATH\n");
    return 2;
  }
  const std::string model_url = argv[1];
  auto schema = llmdlq::schema::compile(read_all(argv[2]));
  auto dlq = llmdlq::sqlite_store::open(argv[4]);
  auto client = llmdlq::openai_compatible_client::open({.base_url = model_url});
  if (!schema || !dlq || !client) {
    std::fprintf(stderr, "streamed_batch: cannot compile the schema, open the DLQ or make the client\n");
    return 1;
  }
  llmdlq::process_config config;
  config.judging.repair = llmdlq::repair_mode::off;  // structured outputs: the answer is strict JSON, or lost
  const llmdlq::pipeline worker{*schema, *dlq, config};

  const auto before = server_stats(model_url);
  if (!before) {
    std::fprintf(stderr, "streamed_batch: the server at %s gives no stats\n", model_url.c_str());
    return 1;
  }
  batch_totals totals;
  std::ifstream responses(argv[3]);
  for (std::string line; std::getline(responses, line);) {
    const auto recorded = boost::json::parse(line).as_object();
    llmdlq::llm_request request;
    request.model = "receipts-local";
    request.messages = {{"system", "Extract the receipt as JSON."},
                        {"user", "answer verbatim:\n" + std::string(recorded.at("response").as_string())}};
    llmdlq::request_context context;
    context.idempotency_key = "streamed:" + std::string(recorded.at("idempotency_key").as_string());
    context.record_id = recorded.at("id").as_string();
    auto judge = worker.judge_stream(context);
    const auto answer = client->complete_streamed(request, judge);
    ++totals.streamed;
    if (!answer) {
      ++totals.call_failures;  // a worker would not commit: the message is asked again later
      continue;
    }
    if (answer->cancelled) ++totals.cut_early;
    const auto d = worker.settle(judge.finish(answer->finish_reason));
    if (d.accepted) ++totals.accepted;
    if (d.dead_letter && d.should_commit()) ++totals.dead_lettered;
  }

  const auto after = server_stats(model_url);
  if (!after) {
    std::fprintf(stderr, "streamed_batch: the server gives no stats\n");
    return 1;
  }
  const auto sent = static_cast<double>(after->tokens_sent - before->tokens_sent);
  const auto whole = static_cast<double>(after->tokens_in_answers - before->tokens_in_answers);
  std::printf("%d answers streamed: %d accepted, %d dead-lettered (%d of them cut off early), %d failed calls\n",
              totals.streamed, totals.accepted, totals.dead_lettered, totals.cut_early, totals.call_failures);
  std::printf("the server generated %.0f of the %.0f tokens the whole answers hold: %.1f %% not paid for\n", sent,
              whole, whole > 0 ? 100.0 * (whole - sent) / whole : 0.0);
  const auto closed = after->closed_early - before->closed_early;
  std::printf(
      "in %lld of the %d cut off, the server found the connection closed before it had written the whole answer\n",
      static_cast<long long>(closed), totals.cut_early);
  // Cuts the server never saw would be tokens paid for all the same.
  return totals.call_failures == 0 && (totals.cut_early == 0 || closed > 0) ? 0 : 1;
}
