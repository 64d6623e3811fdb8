// SPDX-License-Identifier: MIT
#include "llmdlq/llm/evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>

#include <boost/json.hpp>

#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/redrive_source.hpp"
#include "llmdlq/stream_judge.hpp"
#include "run_support.hpp"

LLMDLQ_BEGIN_NAMESPACE

expected<prompt_template, std::string> prompt_template::parse(std::string text) {
  prompt_template t;
  t.uses_input_ = text.find(input_place) != std::string::npos;
  t.uses_failed_output_ = text.find(failed_output_place) != std::string::npos;
  if (!t.uses_input_ && !t.uses_failed_output_) {
    return unexpected(std::string("the prompt template holds neither {{input}} nor {{failed_output}}: every case "
                                  "would be asked the same"));
  }
  t.text_ = std::move(text);
  return t;
}

std::string prompt_template::render(std::string_view input, std::string_view failed_output) const {
  std::string out;
  out.reserve(text_.size() + input.size() + failed_output.size());
  const std::string_view text(text_);
  std::size_t at = 0;
  while (at < text.size()) {
    const auto open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    out.append(text, at, open - at);
    const std::string_view rest = text.substr(open);
    if (rest.starts_with(input_place)) {
      out += input;
      at = open + input_place.size();
    } else if (rest.starts_with(failed_output_place)) {
      out += failed_output;
      at = open + failed_output_place.size();
    } else {
      out += "{{";
      at = open + 2;
    }
  }
  out.append(text.substr(std::min(at, text.size())));
  return out;
}

namespace {

// The output a letter stores whole: its raw response as stored (redacted when it was).
expected<std::string, std::string> stored_failed_output(const envelope& letter) {
  const captured_text& output = letter.raw_response;
  if (!output.text) return unexpected(std::string("the letter stores only the hash of its failed output"));
  if (output.cut) return unexpected(std::string("the letter stores only the start of its failed output"));
  return output.base64 ? detail::base64_decode(*output.text) : *output.text;
}

}  // namespace

eval_case eval_case_of(const envelope& letter, const prompt_template& prompt, const field_cipher* cipher) {
  eval_case c;
  c.id = letter.dlq_id;
  c.before_category = std::string(to_string(letter.failure.category));
  c.before_code = letter.failure.code;
  c.model = letter.model.name;
  if (prompt.uses_input()) {
    auto input = stored_original_input(letter, cipher);
    if (!input) {
      c.not_evaluable = std::move(input.error());
      return c;
    }
    c.input = std::move(*input);
  }
  if (prompt.uses_failed_output()) {
    auto output = stored_failed_output(letter);
    if (!output) {
      c.not_evaluable = std::move(output.error());
      return c;
    }
    c.failed_output = std::move(*output);
  }
  return c;
}

namespace {

// SplitMix64's finaliser: every bit of the result depends on every bit of `x`.
std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a over the bytes, then mixed with the seed: the same on every machine.
std::uint64_t rank_of(std::string_view id, std::uint64_t seed) noexcept {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return mix(h ^ mix(seed));
}

// How many of each stratum: `n` split by size, largest remainders first.
std::vector<std::size_t> quotas(const std::vector<std::size_t>& sizes, std::size_t n) {
  std::vector<std::size_t> quota(sizes.size(), 0);
  std::size_t base = 0;
  if (n >= sizes.size()) {
    std::fill(quota.begin(), quota.end(), 1);  // every stratum is seen
    base = 1;
    n -= sizes.size();
  }
  std::size_t weight = 0;
  for (const auto size : sizes) weight += size - base;
  if (weight == 0 || n == 0) return quota;
  std::vector<std::pair<double, std::size_t>> remainders;  // (fraction, stratum)
  std::size_t given = 0;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const double share = static_cast<double>(n) * static_cast<double>(sizes[s] - base) / static_cast<double>(weight);
    const auto whole = static_cast<std::size_t>(std::floor(share));
    quota[s] += whole;
    given += whole;
    remainders.emplace_back(share - static_cast<double>(whole), s);
  }
  std::stable_sort(remainders.begin(), remainders.end(), [&](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && sizes[a.second] > sizes[b.second]);
  });
  for (std::size_t i = 0; given < n && i < remainders.size(); ++i, ++given) ++quota[remainders[i].second];
  return quota;
}

}  // namespace

std::vector<std::size_t> stratified_sample(std::span<const std::string> strata, std::span<const std::string> ids,
                                           std::size_t n, std::uint64_t seed) {
  const std::size_t total = std::min(strata.size(), ids.size());
  std::vector<std::size_t> chosen;
  if (n >= total) {
    chosen.resize(total);
    std::iota(chosen.begin(), chosen.end(), std::size_t{0});
    return chosen;
  }
  std::map<std::string_view, std::vector<std::size_t>> groups;  // by key: an order that needs no input order
  for (std::size_t i = 0; i < total; ++i) groups[strata[i]].push_back(i);
  std::vector<std::vector<std::size_t>*> members;
  std::vector<std::size_t> sizes;
  for (auto& [key, items] : groups) {
    std::sort(items.begin(), items.end(), [&](std::size_t a, std::size_t b) {
      const auto ra = rank_of(ids[a], seed);
      const auto rb = rank_of(ids[b], seed);
      return ra < rb || (ra == rb && ids[a] < ids[b]);
    });
    members.push_back(&items);
    sizes.push_back(items.size());
  }
  std::vector<std::size_t> quota;
  if (n < sizes.size()) {
    // Fewer places than strata: one item each from the strata the seed ranks first.
    std::vector<std::size_t> order(sizes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::vector<std::uint64_t> ranks;
    for (const auto& [key, items] : groups) ranks.push_back(rank_of(key, seed));
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
    quota.assign(sizes.size(), 0);
    for (std::size_t i = 0; i < n; ++i) quota[order[i]] = 1;
  } else {
    quota = quotas(sizes, n);
  }
  for (std::size_t s = 0; s < members.size(); ++s) {
    chosen.insert(chosen.end(), members[s]->begin(), members[s]->begin() + static_cast<std::ptrdiff_t>(quota[s]));
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::string_view to_string(eval_outcome outcome) noexcept {
  switch (outcome) {
    case eval_outcome::accepted: return "accepted";
    case eval_outcome::failed: return "failed";
    case eval_outcome::not_evaluable: return "not_evaluable";
    case eval_outcome::not_asked: return "not_asked";
    case eval_outcome::call_failed: return "call_failed";
  }
  return "unknown";
}

proportion_interval wilson_interval(std::uint64_t successes, std::uint64_t n, double z) {
  if (n == 0) return {};
  const double total = static_cast<double>(n);
  const double p = static_cast<double>(std::min(successes, n)) / total;
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * total)) / (1 + z2 / total);
  const double half = z * std::sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / (1 + z2 / total);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {

void count_letter(eval_summary& s, const eval_result& r) {
  ++s.letters;
  if (r.outcome == eval_outcome::not_evaluable) ++s.not_evaluable;
  if (r.outcome != eval_outcome::accepted && r.outcome != eval_outcome::failed) return;
  ++s.evaluated;
  const bool fixed = r.outcome == eval_outcome::accepted;
  s.fixed += fixed;
  ++s.matrix[r.before_category][fixed ? std::string("accepted") : r.after_category];
}

void count_control(eval_summary& s, const eval_result& r) {
  ++s.controls;
  if (r.outcome != eval_outcome::accepted && r.outcome != eval_outcome::failed) return;
  ++s.controls_evaluated;
  if (r.outcome == eval_outcome::failed) {
    ++s.regressed;
    ++s.regressions[r.after_category];
  }
}

std::chrono::milliseconds percentile(std::vector<std::chrono::milliseconds>& sorted, double q) {
  if (sorted.empty()) return std::chrono::milliseconds(0);
  const auto at = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
  return sorted[std::min(at, sorted.size() - 1)];
}

}  // namespace

eval_summary summarize(std::span<const eval_result> results) {
  eval_summary s;
  std::vector<std::chrono::milliseconds> latencies;
  for (const auto& r : results) {
    if (r.control) {
      count_control(s, r);
    } else {
      count_letter(s, r);
    }
    s.not_asked += r.outcome == eval_outcome::not_asked;
    s.call_failed += r.outcome == eval_outcome::call_failed;
    if (r.outcome == eval_outcome::accepted || r.outcome == eval_outcome::failed ||
        r.outcome == eval_outcome::call_failed) {
      ++s.calls;
      s.usage += r.usage;
    }
    if (r.outcome == eval_outcome::accepted || r.outcome == eval_outcome::failed) latencies.push_back(r.latency);
  }
  std::sort(latencies.begin(), latencies.end());
  s.latency_p50 = percentile(latencies, 0.5);
  s.latency_p95 = percentile(latencies, 0.95);
  return s;
}

namespace {

// A case's result before it is asked: what it was.
eval_result result_of(const eval_case& c) {
  eval_result r;
  r.id = c.id;
  r.control = c.control;
  r.before_category = c.before_category;
  r.before_code = c.before_code;
  return r;
}

}  // namespace

struct evaluator::impl {
  prompt_template prompt;
  evaluator_options options;
  schema compiled;
  std::string schema_text;
  lowered_schema sent;

  [[nodiscard]] process_config judge_config() const {
    process_config config = options.judge;
    if (sent.nulls) config.judging.forced_nulls = sent.nulls;
    return config;
  }

  [[nodiscard]] llm_request request_for(const eval_case& c) const {
    llm_request request;
    request.model = options.model.empty() ? c.model : options.model;
    request.messages = {{"user", prompt.render(c.input, c.failed_output)}};
    request.max_tokens = options.max_tokens;
    request.temperature = options.temperature;
    if (options.send_schema) {
      request.json_schema = options.provider == provider_profile::full ? schema_text : sent.text();
      request.strict = sent.strict;
    }
    return request;
  }

  // The case asked once, and its answer judged as the pipeline would judge it.
  [[nodiscard]] eval_result ask(const eval_case& c, llm_client& client) const {
    eval_result r = result_of(c);
    const llm_request request = request_for(c);
    stream_judge judge(compiled, {}, judge_config());
    auto answer = client.complete_streamed(request, judge);
    if (!answer) {
      r.outcome = eval_outcome::call_failed;
      r.detail = answer.error().decision.reason + ": " + answer.error().message;
      r.latency = answer.error().latency;
      return r;
    }
    r.usage = answer->usage;
    r.latency = answer->latency;
    request_context& context = judge.context();
    context.record_id = c.id;
    if (!answer->model.empty()) context.model.name = answer->model;
    context.finish_reason = answer->finish_reason;
    context.refusal = answer->refusal;
    auto judged = judge.finish();
    if (judged) {
      r.outcome = eval_outcome::accepted;
      return r;
    }
    r.outcome = eval_outcome::failed;
    r.after_category = std::string(to_string(judged.error().failure.category));
    r.after_code = judged.error().failure.code;
    r.detail = judged.error().failure.message;
    return r;
  }
};

evaluator::evaluator(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
evaluator::evaluator(evaluator&&) noexcept = default;
evaluator& evaluator::operator=(evaluator&&) noexcept = default;
evaluator::~evaluator() = default;

expected<evaluator, schema_error> evaluator::create(std::string_view schema_json, prompt_template prompt,
                                                    evaluator_options options, compile_options compile) {
  auto compiled = schema::compile(schema_json, compile);
  if (!compiled) return unexpected(std::move(compiled.error()));
  boost::system::error_code ec;
  const boost::json::value json = boost::json::parse(schema_json, ec);
  if (ec) return unexpected(schema_error{schema_errc::invalid_json, "", ec.message(), std::nullopt});
  auto lowered = lower_schema(json, options.provider);
  if (!lowered) {
    return unexpected(schema_error{schema_errc::invalid_json, lowered.error().pointer, lowered.error().message,
                                   std::nullopt});
  }
  if (!options.clock) options.clock = system_now;
  return evaluator(std::make_unique<impl>(impl{std::move(prompt), std::move(options), std::move(*compiled),
                                               std::string(schema_json), std::move(*lowered)}));
}

std::vector<eval_result> evaluator::run(std::span<const eval_case> cases, std::span<llm_client* const> clients,
                                        const std::function<void(const eval_result&)>& on_result) const {
  const impl& m = *impl_;
  std::vector<eval_result> results(cases.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> spent{0};
  std::mutex mutex;  // the pace and on_result: one caller at a time
  detail::run_pace pace(m.options.rate, m.options.clock, m.options.sleep);
  const auto settle = [&](std::size_t i, eval_result r) {
    results[i] = std::move(r);
    if (!on_result) return;
    const std::lock_guard lock(mutex);
    on_result(results[i]);
  };
  const auto work = [&](llm_client* client) {
    for (std::size_t i = next++; i < cases.size(); i = next++) {
      const eval_case& c = cases[i];
      eval_result r = result_of(c);
      if (!c.not_evaluable.empty()) {
        r.detail = c.not_evaluable;
      } else if (m.options.token_budget > 0 && spent.load() >= m.options.token_budget) {
        r.outcome = eval_outcome::not_asked;
        r.detail = "the token budget was spent";
      } else if (client == nullptr) {
        r.outcome = eval_outcome::call_failed;
        r.detail = "no client to ask";
      } else {
        {
          const std::lock_guard lock(mutex);
          pace.pace();
        }
        r = m.ask(c, *client);
        spent += r.usage.total();
      }
      settle(i, std::move(r));
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < clients.size(); ++t) threads.emplace_back(work, clients[t]);
  work(clients.empty() ? nullptr : clients[0]);
  for (auto& thread : threads) thread.join();
  return results;
}

LLMDLQ_END_NAMESPACE
