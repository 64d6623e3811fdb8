// SPDX-License-Identifier: MIT
// `llmdlq replay`: runs the recovery ladder over a DLQ (SQLite, PostgreSQL or
// a Kafka topic), dry by default.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/llm/moderation_replay_source.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#include <llmdlq/postgres/replay_state.hpp>
#endif
#ifdef LLMDLQ_TOOL_WITH_KAFKA
#include <llmdlq/kafka/replay_source.hpp>
#endif

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "model_client.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "replay_targets.hpp"
#include "selection_flags.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option model_options[] = {
    {"--model-url", option_kind::value, "URL", "an OpenAI-compatible API (http://127.0.0.1:8080/v1)"},
    {"--model", option_kind::value, "NAME", "the model to ask (default: the one each letter names)"},
    {"--escalate-to", option_kind::value, "NAME", "a stronger model for the attempt after a failed one"},
    {"--api-key-env", option_kind::value, "VAR",
     "the environment variable holding the API key (never on the command line)"},
    {"--timeout", option_kind::value, "SECONDS", "per call (default 60)"},
    {"--provider", option_kind::value, "NAME",
     "how the server takes the schema: openai, gemini, anthropic, ollama\nor full (default: openai for api.openai.com, "
     "gemini for\ngenerativelanguage.googleapis.com, anthropic for api.anthropic.com,\nelse full)"},
};
constexpr option ladder_options[] = {
    {"--schema", option_kind::value, "FILE", "today's schema; required"},
    {"--max-attempts", option_kind::value, "N", "model calls per payload, across replays (default 2)"},
    {"--payload-tokens", option_kind::value, "N", "tokens per payload (default 32000)"},
    {"--window-tokens", option_kind::value, "N", "tokens per hour (0: no limit)"},
    {"--format-assertion", option_kind::flag, "",
     "judge `format` as the pipeline does with it (as `llmdlq process` does)"},
    {"--schema-version", option_kind::value, "V", "today's schema version"},
    {"--prompt-version", option_kind::value, "V", "today's prompt version"},
    {"--relax", option_kind::repeated, "KIND", "declared relaxation: drop-optional, allow-additional, allow-format"},
};
constexpr option run_options[] = {
    {"--execute", option_kind::flag, "", "call models and write results (default: dry run)"},
    {"--rate", option_kind::value, "N", "letters per second (default 10; 0: no limit)"},
    {"--concurrency", option_kind::value, "N", "model calls in flight at once, each on its own connection (default 1)"},
    {"--name", option_kind::value, "NAME", "the replay's cursor (default: replay)"},
    {"--claim-ttl", option_kind::value, "SECONDS",
     "how long the claims of a replay that was killed hold (default 120); a\nlive replay renews its own"},
    {"--to", option_kind::value, "TARGET",
     "also deliver recovered payloads to jsonl:PATH, kafka:BROKERS/TOPIC,\n"
     "postgres:CONNINFO[#[SCHEMA.]TABLE] or redis:HOST:PORT/STREAM, once each; the\n"
     "target must be on the allowlist named by --allowlist FILE or\n"
     "$LLMDLQ_REPLAY_ALLOWLIST, as its spec reads (jsonl: with its absolute path,\n"
     "links resolved; an entry ending in * is a prefix)"},
    {"--allowlist", option_kind::value, "FILE", "the allowlist of --to targets"},
    {"--state", option_kind::value, "sqlite:PATH|postgres:CONNINFO",
     "where a Kafka replay keeps its attempts, ledger and lease (a SQLite or\n"
     "PostgreSQL DLQ keeps them itself: refused there)"},
    {"--group", option_kind::value, "NAME",
     "read a Kafka topic in this consumer group: replayers in one group split\n"
     "its partitions and keep their place in the group's committed offsets"},
    {"--brokers", option_kind::value, "LIST", "deprecated: give kafka:BROKERS/TOPIC"},
    {"--json", option_kind::flag, "", "the summary as JSON"},
    {"--samples", option_kind::value, "N", "dry-run samples shown (default 5)"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to replay"}};

const command_syntax syntax{
    .command = "replay",
    .operands = operands,
    .groups = {group("model (needed with --execute)", model_options), group("ladder", ladder_options),
               group("selection", selection_options), group("run", run_options)},
    .about = "  Runs the recovery ladder (local repair, an isolated repair prompt, a stronger model, declared\n"
             "  relaxations; revalidation of letters written under other versions) over a DLQ's pending and\n"
             "  requeued letters. A dry run (the default) calls no model and changes nothing: it counts the\n"
             "  next step of each letter and shows samples. --execute runs it at --rate letters per second\n"
             "  with --concurrency calls in flight, resuming where a stopped replay left off. Replays on\n"
             "  several machines share a DLQ: each payload is claimed for its turn, and a killed replay's\n"
             "  claims expire after --claim-ttl. A Kafka topic is read only: a real run keeps its state in\n"
             "  --state; replayers given one --group split its partitions as a consumer group does.\n",
    .stores = store_forms(),
    .closing = "A letter whose record does not read back (a time or an envelope that is not one) is skipped,\n"
               "counted and named on stderr; the others are replayed all the same. Exit 0 when the replay ran\n"
               "(see the summary), 2 for usage errors, 3 when a store failed, 6 when it ran but skipped letters\n"
               "that do not read back, 128+N when signal N (INT, TERM) stopped it: its claims are given back.\n",
};

// More calls in flight than a provider's usual concurrent-request limits allow only queue there.
constexpr std::size_t max_concurrency = 256;

constexpr store_kinds state_stores = {store_spec::store_kind::sqlite, store_spec::store_kind::postgres};

struct settings {
  std::string store;  // as given, for the summary
  store_spec dlq;
  std::optional<store_spec> state;
  std::string schema_file;
  std::string model_url;
  std::string api_key_env;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::string to;
  std::string allowlist;
  std::string group;  // the Kafka consumer group (empty: every partition)
  bool json = false;
  bool requeued_only = false;
  recovery_ladder_options ladder;
  replayer_options replay;
};

// The model and the ladder's options.
std::optional<std::string> read_ladder(const parsed_arguments& a, settings& s) {
  s.model_url = std::string(a.value("--model-url").value_or(""));
  s.ladder.provider = provider_of(s.model_url);
  if (const auto v = a.value("--provider")) {
    const auto profile = provider_profile_from(*v);
    if (!profile) return fmt::format("--provider takes openai, gemini, anthropic, ollama or full, not '{}'", *v);
    s.ladder.provider = *profile;
  }
  s.api_key_env = std::string(a.value("--api-key-env").value_or(""));
  if (auto v = a.value("--model")) s.ladder.model = std::string(*v);
  if (auto v = a.value("--escalate-to")) s.ladder.escalation_model = std::string(*v);
  if (auto v = a.value("--schema-version")) s.ladder.current_versions.schema = std::string(*v);
  if (auto v = a.value("--prompt-version")) s.ladder.current_versions.prompt = std::string(*v);
  if (a.has("--format-assertion")) s.ladder.schema.format_assertion = true;
  std::int64_t seconds = 60;
  for (auto e : {read_count(a, "--max-attempts", s.ladder.max_attempts),
                 read_count(a, "--payload-tokens", s.ladder.payload_token_budget),
                 read_count(a, "--window-tokens", s.ladder.window_token_budget), read_count(a, "--timeout", seconds)}) {
    if (e) return e;
  }
  s.timeout = std::chrono::seconds(std::max<std::int64_t>(seconds, 1));
  for (const auto kind : a.values("--relax")) {
    if (kind == "drop-optional") {
      s.ladder.relaxation.drop_failing_optional_properties = true;
    } else if (kind == "allow-additional") {
      s.ladder.relaxation.allow_additional_properties = true;
    } else if (kind == "allow-format") {
      s.ladder.relaxation.allow_format_failures = true;
    } else {
      return fmt::format("no relaxation '{}' (drop-optional, allow-additional, allow-format)", kind);
    }
  }
  return std::nullopt;
}

// Which letters to replay.
std::optional<std::string> read_letters(const parsed_arguments& a, settings& s) {
  letter_selection selection;
  if (auto e = read_selection(a, selection)) return e;
  s.replay.filter = std::move(selection.filter);
  s.replay.limit = selection.limit;
  s.requeued_only = selection.requeued_only;
  return std::nullopt;
}

// How the run goes, and where its results and state go.
std::optional<std::string> read_run(const parsed_arguments& a, settings& s) {
  s.replay.dry_run = !a.has("--execute");
  s.json = a.has("--json");
  if (auto v = a.value("--name")) s.replay.name = std::string(*v);
  if (auto v = a.value("--group")) {
    if (v->empty()) return std::string("--group needs a consumer group's name");
    s.group = std::string(*v);
  }
  s.to = std::string(a.value("--to").value_or(""));
  s.allowlist = std::string(a.value("--allowlist").value_or(""));
  if (auto e = read_count(a, "--samples", s.replay.samples)) return e;
  if (auto e = read_rate(a, s.replay.rate)) return e;
  if (auto e = read_count(a, "--concurrency", s.replay.concurrency)) return e;
  if (s.replay.concurrency == 0 || s.replay.concurrency > max_concurrency) {
    return fmt::format("--concurrency takes 1 to {}", max_concurrency);
  }
  std::size_t claim_ttl = 0;
  if (auto e = read_count(a, "--claim-ttl", claim_ttl)) return e;
  if (a.has("--claim-ttl")) {
    if (claim_ttl < 3 || claim_ttl > 86400) return std::string("--claim-ttl takes 3 to 86400 seconds");
    s.replay.lease_ttl = std::chrono::seconds(claim_ttl);
  }
  if (const auto v = a.value("--state")) {
    auto state = parse_store_spec(*v, state_stores);
    if (!state) return fmt::format("no replay state store '{}' ({})", *v, store_forms(state_stores));
    s.state = std::move(*state);
  }
  return std::nullopt;
}

// The DLQ: `kafka:TOPIC --brokers LIST`, the form before kafka:BROKERS/TOPIC, is still read.
std::optional<std::string> read_store(const parsed_arguments& a, settings& s) {
  s.store = std::string(a.operand(0));
  std::string text = s.store;
  if (const auto brokers = a.value("--brokers")) {
    if (!text.starts_with("kafka:") || text.find('/') != std::string::npos) {
      return std::string("--brokers goes only with kafka:TOPIC; give kafka:BROKERS/TOPIC instead");
    }
    complain("replay", fmt::format("--brokers is deprecated: give kafka:{}/{}", *brokers, text.substr(6)));
    text = fmt::format("kafka:{}/{}", *brokers, text.substr(6));
  }
  auto dlq = parse_store_spec(text);
  if (!dlq) return dlq.error();
  s.dlq = std::move(*dlq);
  return std::nullopt;
}

// Reads the command line into `s`; an error message, or nothing.
std::optional<std::string> read_settings(const parsed_arguments& a, settings& s) {
  for (const auto read : {read_store, read_ladder, read_letters, read_run}) {
    if (auto e = read(a, s)) return e;
  }
  s.schema_file = std::string(a.value("--schema").value_or(""));
  if (s.schema_file.empty()) return std::string("give today's schema with --schema FILE");
  if (!s.replay.dry_run && s.model_url.empty()) return std::string("--execute needs --model-url");
  if (!s.replay.dry_run && !s.state && s.dlq.kind == store_spec::store_kind::kafka) {
    return std::string("a Kafka topic is read only: give --state for the attempts and the ledger");
  }
  if (!s.group.empty() && s.dlq.kind != store_spec::store_kind::kafka) {
    return std::string("--group is for a Kafka topic only: its replayers split the topic's partitions");
  }
  // A SQLite or PostgreSQL DLQ's replay state is in its own database: a --state would not be used.
  if (s.state && s.dlq.kind != store_spec::store_kind::kafka) {
    const std::string dlq = s.dlq.kind == store_spec::store_kind::sqlite ? "sqlite:" + display_name(s.dlq)
                                                                         : display_name(s.dlq);
    return fmt::format("--state is for a Kafka topic only: {} keeps its replay state (attempts, ledger, lease) in "
                       "its own database, so --state would not be used (leave it out)",
                       dlq);
  }
  return std::nullopt;
}

// The store's parts a replay uses: where letters come from, and where its state lives.
struct opened_store {
  std::unique_ptr<moderation_store> moderation;
  std::unique_ptr<replay_source> source;
  std::unique_ptr<replay_state> state;
};

// Why a store did not open, and the exit status that says so: a wrong
// argument is a usage error, a store that fails to open is a store failure.
struct open_failure {
  int exit_code;
  std::string message;
};

unexpected<open_failure> usage_error(std::string message) {
  return unexpected(open_failure{exit_usage, std::move(message)});
}
unexpected<open_failure> store_failure(std::string message) {
  return unexpected(open_failure{exit_sink, std::move(message)});
}

// A dry run opens a state only to read what it holds: a SQLite state that is
// not there holds nothing, and is not made.
expected<std::unique_ptr<replay_state>, open_failure> open_state(const store_spec& spec, bool dry_run) {
  if (spec.kind == store_spec::store_kind::sqlite) {
    const std::filesystem::path path(spec.location);
    if (dry_run && !std::filesystem::exists(path)) return std::unique_ptr<replay_state>();
    auto state = sqlite_replay_state::open(path);
    if (!state) return store_failure(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<sqlite_replay_state>(std::move(*state)));
  }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  if (spec.kind == store_spec::store_kind::postgres) {
    auto state = postgres_replay_state::open(spec.location);
    if (!state) return store_failure(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<postgres_replay_state>(std::move(*state)));
  }
#endif
  return usage_error(fmt::format("no replay state store '{}' ({})", display_name(spec), store_forms(state_stores)));
}

// The letters of a Kafka topic: read only, its state kept in --state.
expected<opened_store, open_failure> open_topic(const settings& s) {
#ifdef LLMDLQ_TOOL_WITH_KAFKA
  opened_store opened;
  kafka_topic_options topic;
  topic.properties = {{"bootstrap.servers", s.dlq.location}};
  topic.topic = s.dlq.topic;
  topic.group = s.group;
  auto source = kafka_replay_source::open(std::move(topic));
  if (!source) return store_failure(source.error().message);
  opened.source = std::make_unique<kafka_replay_source>(std::move(*source));
  return opened;
#else
  (void)s;
  return usage_error("this llmdlq was built without Kafka");
#endif
}

// A dry run of a SQLite or PostgreSQL DLQ reads the letters' attempts from
// their histories, and opens no state: it makes no table and takes no lease.
expected<opened_store, open_failure> open_store(const settings& s) {
  const bool dry = s.replay.dry_run;
  const bool topic = s.dlq.kind == store_spec::store_kind::kafka;
  expected<opened_store, open_failure> opened = topic ? open_topic(s) : opened_store{};
  if (!opened) return opened;
  if (s.dlq.kind == store_spec::store_kind::sqlite && !std::filesystem::exists(s.dlq.location)) {
    return usage_error("no DLQ at " + s.dlq.location);
  }
  if (!topic) {
    // Only a real run may create or migrate a table.
    auto store = cli::open_store(s.dlq, /*read_only=*/dry);
    if (!store) {
      return unexpected(open_failure{store.error().usage ? exit_usage : exit_sink, std::move(store.error().message)});
    }
    opened->moderation = std::move(*store);
    opened->source = std::make_unique<moderation_replay_source>(*opened->moderation, "llmdlq-replay", s.requeued_only);
    if (!dry) {
      auto state = open_state(s.dlq, dry);
      if (!state) return unexpected(state.error());
      opened->state = std::move(*state);
    }
  }
  if (!opened->state && s.state) {
    auto state = open_state(*s.state, dry);
    if (!state) return unexpected(state.error());
    opened->state = std::move(*state);
  }
  return opened;
}

// Who holds a real run's lease and claims: this process.
std::string lease_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("llmdlq-replay:{}:{}", host, ::getpid());
}

// A TERM or an INT (Ctrl-C) during a real run gives its lease and claims
// back before the process ends, so that the next replay need not wait for
// them to expire; what the run did is in the store, its state and the
// ledger, as after a kill. Called before any other thread starts, so that
// every thread blocks them.
void give_claims_back_on_signal(store_spec state_spec, std::string owner) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) return;
  std::thread([signals, spec = std::move(state_spec), owner = std::move(owner)] {
    int signal = 0;
    if (::sigwait(&signals, &signal) != 0) std::_Exit(exit_sink);
    if (auto state = open_state(spec, false); state && *state) (void)(*state)->release_all(owner);
    std::_Exit(128 + signal);
  }).detach();
}

// A replay state for a dry run without one: answers reads with "nothing yet".
class no_replay_state final : public replay_state {
 public:
  expected<void, replay_state_error> acquire_lease(std::string_view, std::string_view, std::chrono::seconds) override {
    return {};
  }
  expected<void, replay_state_error> release_lease(std::string_view, std::string_view) override { return {}; }
  expected<std::optional<std::string>, replay_state_error> load_cursor(std::string_view) override {
    return std::nullopt;
  }
  expected<void, replay_state_error> store_cursor(std::string_view, std::string_view, std::string_view,
                                                  std::string_view) override {
    return refuse();
  }
  expected<std::uint32_t, replay_state_error> attempts(std::string_view) override { return 0u; }
  expected<std::uint32_t, replay_state_error> reserve_attempt(std::string_view, std::uint32_t) override {
    return refuse();
  }
  expected<void, replay_state_error> release_attempt(std::string_view) override { return refuse(); }
  expected<call_hold, replay_state_error> record_call_failure(std::string_view, timestamp, std::string_view) override {
    return refuse();
  }
  expected<call_hold, replay_state_error> hold(std::string_view) override { return call_hold{}; }
  expected<void, replay_state_error> clear_hold(std::string_view) override { return refuse(); }
  expected<ledger_entry, replay_state_error> record_output(std::string_view, std::string_view, std::string_view,
                                                           std::string_view) override {
    return refuse();
  }
  expected<std::optional<ledger_entry>, replay_state_error> find_output(std::string_view) override {
    return std::nullopt;
  }
  expected<void, replay_state_error> mark_delivered(std::string_view) override { return refuse(); }
  expected<std::vector<ledger_entry>, replay_state_error> undelivered(std::string_view, std::size_t) override {
    return std::vector<ledger_entry>{};
  }

 private:
  static unexpected<replay_state_error> refuse() {
    return unexpected(replay_state_error{replay_state_errc::store_unavailable, "a dry run changes nothing", {}, {}});
  }
};

void print_summary(const settings& s, const replay_summary& r) {
  if (s.json) {
    boost::json::object out{{"store", s.store},
                            {"dry_run", r.dry_run},
                            {"seen", r.seen},
                            {"selected", r.selected},
                            {"recovered", r.recovered},
                            {"duplicates", r.duplicates},
                            {"exhausted", r.exhausted},
                            {"held", r.held},
                            {"delivered", r.delivered},
                            {"superseded", r.superseded},
                            {"purged", r.purged},
                            {"unreadable", r.unreadable},
                            {"unreadable_letters", unreadable_json(r.unreadable_letters)},
                            {"calls", r.calls},
                            {"finished", r.finished}};
    out.emplace("claimed_elsewhere", r.claimed_elsewhere);
    out.emplace("tokens", boost::json::object{{"prompt", r.usage.prompt_tokens},
                                              {"completion", r.usage.completion_tokens},
                                              {"total", r.usage.total()}});
    boost::json::object outcomes;
    for (const auto& [name, n] : r.by_outcome) outcomes.emplace(name, n);
    out.emplace("by_outcome", std::move(outcomes));
    if (!r.stopped_because.empty()) out.emplace("stopped_because", r.stopped_because);
    boost::json::array samples;
    for (const auto& sample : r.samples) {
      boost::json::object o{{"dlq_id", sample.dlq_id},
                            {"step", to_string(sample.step.kind)},
                            {"detail", sample.step.detail},
                            {"before", sample.before}};
      if (sample.step.kind == recovery_step_kind::stop) o.emplace("reason", to_string(sample.step.reason));
      if (!sample.step.model.empty()) o.emplace("model", sample.step.model);
      if (sample.after) o.emplace("after", *sample.after);
      samples.push_back(std::move(o));
    }
    if (r.dry_run) out.emplace("samples", std::move(samples));
    std::cout << json_text(out) << '\n';
    return;
  }
  std::cout << fmt::format("replay of {}{}: {} read, {} selected{}\n", s.store,
                           r.dry_run ? " (dry run: nothing called, nothing changed)" : "",
                           detail::counted(r.seen, "letter"), r.selected,
                           r.finished ? "" : ", stopped: " + r.stopped_because);
  if (r.unreadable > 0) {
    std::cout << fmt::format("{} skipped: {} not read back (named on stderr)\n",
                             detail::counted(r.unreadable, "letter"),
                             r.unreadable == 1 ? "its record does" : "their records do");
  }
  std::cout << (r.dry_run ? "next steps:\n" : "outcomes:\n");
  for (const auto& [name, n] : r.by_outcome) std::cout << fmt::format("  {:<22} {:>6}\n", name, n);
  if (!r.dry_run) {
    std::cout << fmt::format("recovered {}, exhausted {}, held {}, already written {}, delivered {}\n", r.recovered,
                             r.exhausted, r.held, r.duplicates, r.delivered);
    if (r.superseded + r.purged > 0) {
      std::cout << fmt::format("acted on by an operator meanwhile {}, purged meanwhile {}\n", r.superseded, r.purged);
    }
    if (r.claimed_elsewhere > 0) {
      std::cout << fmt::format("{} held by another replay: left to it\n",
                               detail::counted(r.claimed_elsewhere, "letter"));
    }
    std::cout << fmt::format("tokens {} (prompt {}, completion {}) in {}\n", r.usage.total(), r.usage.prompt_tokens,
                             r.usage.completion_tokens, detail::counted(r.calls, "call"));
  }
  for (const auto& sample : r.samples) {
    std::cout << fmt::format("sample {}: {}{}\n", sample.dlq_id,
                             sample.step.kind == recovery_step_kind::stop
                                 ? "stop (" + std::string(to_string(sample.step.reason)) + ")"
                                 : std::string(to_string(sample.step.kind)),
                             sample.step.detail.empty() ? "" : " — " + sample.step.detail);
    std::cout << "  - " << sample.before << '\n';
    if (sample.after) std::cout << "  + " << *sample.after << '\n';
  }
}

// How many letters the run will take, for its progress: those of a
// SQLite or PostgreSQL DLQ after the cursor; nothing for a topic (it would
// be read twice).
std::optional<std::uint64_t> count_selection(const settings& s, opened_store& store) {
  if (!store.moderation) return std::nullopt;
  std::string cursor;
  if (store.state) {
    auto stored = store.state->load_cursor(s.replay.name);
    if (!stored) return std::nullopt;
    cursor = stored->value_or("");
  }
  std::vector<moderation_status> statuses{moderation_status::requeued};
  if (!s.requeued_only) statuses.push_back(moderation_status::pending);
  return count_selected(*store.moderation, statuses, s.replay.filter, s.replay.limit, cursor);
}

// Where --to sends recovered payloads: checked against the allowlist, opened only for a real run.
expected<std::unique_ptr<replay_target>, std::string> open_target(const settings& s) {
  if (s.to.empty()) return std::unique_ptr<replay_target>();
  const auto allowed = allowed_target_spec(s.to, s.allowlist);
  if (!allowed) return unexpected(allowed.error());
  if (s.replay.dry_run) return std::unique_ptr<replay_target>();
  return open_allowed_target(*allowed);
}

// The model --model-url names; a dry run calls no model: any client will do, and none is opened.
expected<std::unique_ptr<llm_client>, std::string> open_client(const settings& s) {
  if (s.model_url.empty()) {
    struct unused_client final : llm_client {
      expected<completion, call_error> complete(const llm_request&) override {
        return unexpected(call_error{{call_verdict::retry_later, "no_model_url", {}, {}}, {}, "no --model-url", {}});
      }
      std::string endpoint() const override { return "none"; }
    };
    return std::unique_ptr<llm_client>(std::make_unique<unused_client>());
  }
  return open_model_client(s.model_url, s.api_key_env, s.timeout);
}

}  // namespace

int replay_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  settings s;
  if (auto error = read_settings(*parsed, s)) return cli::usage_error(syntax, *error);
  auto schema_text = read_file_bounded(s.schema_file, file_kind::schema);
  if (!schema_text) {
    complain("replay", schema_text.error().message);
    return exit_usage;
  }
  auto target = open_target(s);
  if (!target) {
    complain("replay", target.error());
    return exit_usage;
  }
  auto client = open_client(s);
  if (!client) {
    complain("replay", client.error());
    return exit_usage;
  }
  if (!s.replay.dry_run) {
    s.replay.owner = lease_owner();
    // A topic's state may be shared by several topics, so its run's lease names the topic.
    const bool topic = s.dlq.kind == store_spec::store_kind::kafka;
    if (topic) s.replay.lease = std::string(default_replay_lease) + ":kafka:" + s.dlq.topic;
    give_claims_back_on_signal(topic ? *s.state : s.dlq, s.replay.owner);
    s.replay.new_client = [&s]() -> std::unique_ptr<llm_client> {
      auto more = open_client(s);
      return more ? std::move(*more) : nullptr;
    };
  }
  auto store = open_store(s);
  if (!store) {
    complain("replay", store.error().message);
    return store.error().exit_code;
  }
  no_replay_state nothing;
  replay_state& state = store->state ? *store->state : static_cast<replay_state&>(nothing);

  auto ladder = recovery_ladder::create(*schema_text, **client, s.ladder);
  if (!ladder) {
    complain("replay", fmt::format("{}: {}", s.schema_file, ladder.error().message));
    return exit_usage;
  }
  progress_line progress("replay", !s.json);
  progress_counts counts;
  if (progress.shown()) counts.selected = count_selection(s, *store);
  if (s.ladder.window_token_budget > 0) counts.token_budget = s.ladder.window_token_budget;
  s.replay.progress = [&progress, counts, dry = s.replay.dry_run](const replay_progress& p) mutable {
    counts.done = p.done;
    if (!dry) counts.tokens = p.tokens;
    progress.update(counts);
  };
  progress.update(counts);
  s.replay.on_unreadable = [&progress](const unreadable_record& letter) {
    progress.clear();
    complain("replay",
             fmt::format("skipped {}: it does not read back: {}", printable_id(letter.dlq_id), letter.reason));
  };
  replayer run(*ladder, *store->source, state, s.replay);
  if (*target) run.deliver_to(**target);
  auto summary = run.run();
  progress.finish();
  if (!summary) {
    complain("replay", summary.error().message);
    return exit_sink;
  }
  print_summary(s, *summary);
  if (!std::cout.flush()) {
    complain("replay", "cannot write the summary to standard output: what the run did is in the store");
    return exit_sink;
  }
  return exit_for_unreadable(summary->unreadable);
}

}  // namespace llmdlq::cli
