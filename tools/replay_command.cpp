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
#include <llmdlq/llm/openai_compatible_client.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#  include <llmdlq/postgres/replay_state.hpp>
#  include <llmdlq/postgres/store.hpp>
#endif
#ifdef LLMDLQ_TOOL_WITH_KAFKA
#  include "kafka_replay_source.hpp"
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "replay_targets.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq replay STORE --schema FILE [options]\n"
    "  Runs the recovery ladder (local repair, an isolated repair prompt, a stronger model, declared\n"
    "  relaxations; revalidation of letters written under other versions) over a DLQ's pending and\n"
    "  requeued letters. A dry run (the default) calls no model and changes nothing: it counts the\n"
    "  next step of each letter and shows samples. --execute runs it, under a lease (one replay per\n"
    "  store), at --rate letters per second, resuming where a stopped replay left off.\n"
    "STORE:\n"
    "  sqlite:PATH | postgres:CONNINFO | kafka:TOPIC (with --brokers and --state; read only)\n"
    "model (needed with --execute):\n"
    "  --model-url URL        an OpenAI-compatible API (http://127.0.0.1:8080/v1)\n"
    "  --model NAME           the model to ask (default: the one each letter names)\n"
    "  --escalate-to NAME     a stronger model for the attempt after a failed one\n"
    "  --api-key-env VAR      the environment variable holding the API key (never on the command line)\n"
    "  --timeout SECONDS      per call (default 60)\n"
    "ladder:\n"
    "  --max-attempts N       model calls per payload, across replays (default 2)\n"
    "  --payload-tokens N     tokens per payload (default 32000)   --window-tokens N  per hour (0: no limit)\n"
    "  --format-assertion     judge `format` as the pipeline does with it (as `llmdlq process` does)\n"
    "  --schema-version V     today's schema version   --prompt-version V  today's prompt version\n"
    "  --relax KIND           declared relaxation: drop-optional, allow-additional, allow-format (repeatable)\n"
    "selection (repeatable where it makes sense):\n"
    "  --category C  --triage T  --code C  --id DLQ_ID  --written-schema V  --written-prompt V\n"
    "  --written-model V  --since TIME  --until TIME (RFC 3339)  --requeued-only  --limit N\n"
    "run:\n"
    "  --execute              call models and write results (default: dry run)\n"
    "  --rate N               letters per second (default 10; 0: no limit)\n"
    "  --name NAME            the replay's cursor (default: replay); one replay of a store runs at a\n"
    "                         time whatever the name\n"
    "  --to jsonl:PATH        also append recovered payloads here; the target must be on the allowlist\n"
    "                         named by --allowlist FILE or $LLMDLQ_REPLAY_ALLOWLIST, as jsonl: and its\n"
    "                         absolute path with links resolved (an entry ending in * is a prefix)\n"
    "  --state sqlite:PATH|postgres:CONNINFO   where a Kafka replay keeps its attempts, ledger and lease\n"
    "  --brokers LIST         Kafka bootstrap servers\n"
    "  --json                 the summary as JSON   --samples N  dry-run samples shown (default 5)\n"
    "Exit 0 when the replay ran (see the summary), 2 for usage errors, 3 when a store failed,\n"
    "4 when another replay holds the lease, 128+N when signal N (INT, TERM) stopped it: its lease is given back.\n";

constexpr int exit_busy = 4;

struct settings {
  std::string store;
  std::string schema_file;
  std::string model_url;
  std::string api_key_env;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::string to;
  std::string allowlist;
  std::string state;
  std::string brokers;
  bool json = false;
  bool requeued_only = false;
  recovery_ladder_options ladder;
  replayer_options replay;
};

std::optional<std::int64_t> parse_count(std::string_view text) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0) return std::nullopt;
  return n;
}

// Parses the command line into `s`; an error message, or nothing.
std::optional<std::string> parse(arguments& args, settings& s, bool& help) {
  auto& f = s.replay.filter;
  while (!args.done()) {
    const std::string_view arg = args.take();
    const auto value = [&]() -> std::optional<std::string> {
      auto v = args.value_of(arg);
      return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
    };
    const auto count = [&](auto& out) -> std::optional<std::string> {
      auto v = value();
      if (!v) return std::string("missing value");
      auto n = parse_count(*v);
      if (!n) return fmt::format("{} wants a number, not '{}'", arg, *v);
      out = static_cast<std::remove_reference_t<decltype(out)>>(*n);
      return std::nullopt;
    };
    std::optional<std::string> v;
    if (arg == "--help" || arg == "-h") {
      help = true;
      return std::nullopt;
    } else if (arg == "--execute") {
      s.replay.dry_run = false;
    } else if (arg == "--json") {
      s.json = true;
    } else if (arg == "--requeued-only") {
      s.requeued_only = true;
    } else if (arg == "--format-assertion") {
      s.ladder.schema.format_assertion = true;
    } else if (arg == "--schema" || arg == "--model-url" || arg == "--model" || arg == "--escalate-to" ||
               arg == "--api-key-env" || arg == "--to" || arg == "--allowlist" || arg == "--state" ||
               arg == "--brokers" || arg == "--name" || arg == "--schema-version" || arg == "--prompt-version" ||
               arg == "--written-schema" || arg == "--written-prompt" || arg == "--written-model" ||
               arg == "--category" || arg == "--triage" || arg == "--code" || arg == "--id" || arg == "--since" ||
               arg == "--until" || arg == "--relax") {
      if (!(v = value())) return std::string("missing value");
      if (arg == "--schema") s.schema_file = *v;
      if (arg == "--model-url") s.model_url = *v;
      if (arg == "--model") s.ladder.model = *v;
      if (arg == "--escalate-to") s.ladder.escalation_model = *v;
      if (arg == "--api-key-env") s.api_key_env = *v;
      if (arg == "--to") s.to = *v;
      if (arg == "--allowlist") s.allowlist = *v;
      if (arg == "--state") s.state = *v;
      if (arg == "--brokers") s.brokers = *v;
      if (arg == "--name") s.replay.name = *v;
      if (arg == "--schema-version") s.ladder.current_versions.schema = *v;
      if (arg == "--prompt-version") s.ladder.current_versions.prompt = *v;
      if (arg == "--written-schema") f.schema_version = *v;
      if (arg == "--written-prompt") f.prompt_version = *v;
      if (arg == "--written-model") f.model_version = *v;
      if (arg == "--category") {
        if (!failure_category_from(*v)) return fmt::format("no failure category '{}'", *v);
        f.categories.push_back(*v);
      }
      if (arg == "--triage") {
        if (!triage_class_from(*v)) return fmt::format("no triage class '{}'", *v);
        f.triage_classes.push_back(*v);
      }
      if (arg == "--code") f.codes.push_back(*v);
      if (arg == "--id") f.dlq_ids.push_back(*v);
      if (arg == "--since" || arg == "--until") {
        const auto t = parse_rfc3339(*v);
        if (!t) return fmt::format("{} wants an RFC 3339 time, not '{}'", arg, *v);
        (arg == "--since" ? f.since : f.until) = *t;
      }
      if (arg == "--relax") {
        if (*v == "drop-optional") {
          s.ladder.relaxation.drop_failing_optional_properties = true;
        } else if (*v == "allow-additional") {
          s.ladder.relaxation.allow_additional_properties = true;
        } else if (*v == "allow-format") {
          s.ladder.relaxation.allow_format_failures = true;
        } else {
          return fmt::format("no relaxation '{}' (drop-optional, allow-additional, allow-format)", *v);
        }
      }
    } else if (arg == "--max-attempts") {
      if (auto e = count(s.ladder.max_attempts)) return e;
    } else if (arg == "--payload-tokens") {
      if (auto e = count(s.ladder.payload_token_budget)) return e;
    } else if (arg == "--window-tokens") {
      if (auto e = count(s.ladder.window_token_budget)) return e;
    } else if (arg == "--limit") {
      if (auto e = count(s.replay.limit)) return e;
    } else if (arg == "--samples") {
      if (auto e = count(s.replay.samples)) return e;
    } else if (arg == "--timeout") {
      std::int64_t seconds = 0;
      if (auto e = count(seconds)) return e;
      s.timeout = std::chrono::seconds(std::max<std::int64_t>(seconds, 1));
    } else if (arg == "--rate") {
      if (!(v = value())) return std::string("missing value");
      char* end = nullptr;
      const double rate = std::strtod(v->c_str(), &end);
      if (end == v->c_str() || *end != '\0' || !(rate >= 0) || rate > 1e6) {
        return fmt::format("--rate wants letters per second, not '{}'", *v);
      }
      s.replay.rate = rate;
    } else if (s.store.empty() && !arg.starts_with("-")) {
      s.store = std::string(arg);
    } else {
      return "unexpected argument " + std::string(arg);
    }
  }
  if (s.store.empty()) return std::string("give the DLQ to replay");
  if (s.schema_file.empty()) return std::string("give today's schema with --schema FILE");
  if (!s.replay.dry_run && s.model_url.empty()) return std::string("--execute needs --model-url");
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

unexpected<open_failure> usage_error(std::string message) { return unexpected(open_failure{exit_usage, std::move(message)}); }
unexpected<open_failure> store_failure(std::string message) { return unexpected(open_failure{exit_sink, std::move(message)}); }

// A dry run opens a state only to read what it holds: a SQLite state that is
// not there holds nothing, and is not made.
expected<std::unique_ptr<replay_state>, open_failure> open_state(std::string_view spec, bool dry_run) {
  if (spec.starts_with("sqlite:") && spec.size() > 7) {
    const std::filesystem::path path(spec.substr(7));
    if (dry_run && !std::filesystem::exists(path)) return std::unique_ptr<replay_state>();
    auto state = sqlite_replay_state::open(path);
    if (!state) return store_failure(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<sqlite_replay_state>(std::move(*state)));
  }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  if (spec.starts_with("postgres:") && spec.size() > 9) {
    auto state = postgres_replay_state::open(spec.substr(9));
    if (!state) return store_failure(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<postgres_replay_state>(std::move(*state)));
  }
#endif
  (void)dry_run;
  return usage_error(fmt::format("no replay state store '{}' (sqlite:PATH or postgres:CONNINFO)", spec));
}

// A dry run of a SQLite or PostgreSQL DLQ reads the letters' attempts from
// their histories, and opens no state: it makes no table and takes no lease.
expected<opened_store, open_failure> open_store(const settings& s) {
  opened_store opened;
  const std::string_view spec = s.store;
  const bool dry = s.replay.dry_run;
  if (spec.starts_with("sqlite:") && spec.size() > 7) {
    const std::filesystem::path path(spec.substr(7));
    if (!std::filesystem::exists(path)) return usage_error("no DLQ at " + path.string());
    auto store = sqlite_store::open(path, {.read_only = dry});
    if (!store) return store_failure(store.error().message);
    opened.moderation = std::make_unique<sqlite_store>(std::move(*store));
    if (!dry) {
      auto state = open_state(spec, dry);
      if (!state) return unexpected(state.error());
      opened.state = std::move(*state);
    }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  } else if (spec.starts_with("postgres:") && spec.size() > 9) {
    postgres_store_options options;
    options.migrate = !dry;  // only a real run may create or migrate the table
    auto store = postgres_store::open(spec.substr(9), std::move(options));
    if (!store) return store_failure(store.error().message);
    opened.moderation = std::make_unique<postgres_store>(std::move(*store));
    if (!dry) {
      auto state = open_state(spec, dry);
      if (!state) return unexpected(state.error());
      opened.state = std::move(*state);
    }
#endif
#ifdef LLMDLQ_TOOL_WITH_KAFKA
  } else if (spec.starts_with("kafka:") && spec.size() > 6) {
    if (s.brokers.empty()) return usage_error("a Kafka topic needs --brokers");
    if (s.state.empty() && !dry) {
      return usage_error("a Kafka topic is read only: give --state for the attempts and the ledger");
    }
    auto source = kafka_replay_source::open(std::string(spec.substr(6)), {{"bootstrap.servers", s.brokers}});
    if (!source) return store_failure(source.error());
    opened.source = std::make_unique<kafka_replay_source>(std::move(*source));
#endif
  } else {
    return usage_error(fmt::format("no DLQ '{}': give sqlite:PATH, postgres:CONNINFO or kafka:TOPIC", spec));
  }
  if (opened.moderation) {
    opened.source = std::make_unique<moderation_replay_source>(*opened.moderation, "llmdlq-replay", s.requeued_only);
  }
  if (!opened.state && !s.state.empty()) {
    auto state = open_state(s.state, dry);
    if (!state) return unexpected(state.error());
    opened.state = std::move(*state);
  }
  return opened;
}

// Who holds a real run's lease: this process.
std::string lease_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("llmdlq-replay:{}:{}", host, ::getpid());
}

// A TERM or an INT (Ctrl-C) during a real run gives the lease back before the
// process ends, so that the next replay need not wait for it to expire; what
// the run did is in the store, its state and the ledger, as after a kill.
// Called before any other thread starts, so that every thread blocks them.
void give_lease_back_on_signal(std::string state_spec, std::string name, std::string owner) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) return;
  std::thread([signals, spec = std::move(state_spec), name = std::move(name), owner = std::move(owner)] {
    int signal = 0;
    if (::sigwait(&signals, &signal) != 0) std::_Exit(exit_sink);
    if (auto state = open_state(spec, false); state && *state) (void)(*state)->release_lease(name, owner);
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
    boost::json::object out{{"store", s.store},        {"dry_run", r.dry_run},     {"seen", r.seen},
                            {"selected", r.selected}, {"recovered", r.recovered}, {"duplicates", r.duplicates},
                            {"exhausted", r.exhausted}, {"held", r.held},       {"delivered", r.delivered},
                            {"superseded", r.superseded}, {"purged", r.purged},
                            {"calls", r.calls},       {"finished", r.finished}};
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
    std::cout << boost::json::serialize(out) << '\n';
    return;
  }
  std::cout << fmt::format("replay of {}{}: {} read, {} selected{}\n", s.store,
                           r.dry_run ? " (dry run: nothing called, nothing changed)" : "",
                           detail::counted(r.seen, "letter"), r.selected,
                           r.finished ? "" : ", stopped: " + r.stopped_because);
  std::cout << (r.dry_run ? "next steps:\n" : "outcomes:\n");
  for (const auto& [name, n] : r.by_outcome) std::cout << fmt::format("  {:<22} {:>6}\n", name, n);
  if (!r.dry_run) {
    std::cout << fmt::format("recovered {}, exhausted {}, held {}, already written {}, delivered {}\n", r.recovered,
                             r.exhausted, r.held, r.duplicates, r.delivered);
    if (r.superseded + r.purged > 0) {
      std::cout << fmt::format("acted on by an operator meanwhile {}, purged meanwhile {}\n", r.superseded, r.purged);
    }
    std::cout << fmt::format("tokens {} (prompt {}, completion {}) in {}\n", r.usage.total(),
                             r.usage.prompt_tokens, r.usage.completion_tokens, detail::counted(r.calls, "call"));
  }
  for (const auto& sample : r.samples) {
    std::cout << fmt::format("sample {}: {}{}\n", sample.dlq_id,
                             sample.step.kind == recovery_step_kind::stop ? "stop (" + std::string(to_string(sample.step.reason)) + ")"
                                                                          : std::string(to_string(sample.step.kind)),
                             sample.step.detail.empty() ? "" : " — " + sample.step.detail);
    std::cout << "  - " << sample.before << '\n';
    if (sample.after) std::cout << "  + " << *sample.after << '\n';
  }
}

}  // namespace

int replay_command(arguments args) {
  settings s;
  bool help = false;
  if (auto error = parse(args, s, help)) {
    complain("replay", *error);
    std::cerr << usage;
    return exit_usage;
  }
  if (help) {
    std::cout << usage;
    return exit_ok;
  }
  auto schema_text = read_file(s.schema_file, 64u << 20);
  if (!schema_text) {
    complain("replay", fmt::format("cannot read {}: {}", s.schema_file, schema_text.error()));
    return exit_usage;
  }
  std::optional<jsonl_replay_target> target;
  if (!s.to.empty()) {
    const auto path = allowed_jsonl_target(s.to, s.allowlist);
    if (!path) {
      complain("replay", path.error());
      return exit_usage;
    }
    if (!s.replay.dry_run) {
      auto opened = jsonl_replay_target::open(*path);
      if (!opened) {
        complain("replay", opened.error());
        return exit_usage;
      }
      target.emplace(std::move(*opened));
    }
  }
  std::string api_key;
  if (!s.api_key_env.empty()) {
    const char* key = std::getenv(s.api_key_env.c_str());
    if (key == nullptr || *key == '\0') {
      complain("replay", fmt::format("${} holds no API key", s.api_key_env));
      return exit_usage;
    }
    api_key = key;
  }

  if (!s.replay.dry_run) {
    s.replay.owner = lease_owner();
    // One replay per store: a topic's state may be shared by several topics, so its lease names the topic.
    if (s.store.starts_with("kafka:")) s.replay.lease = std::string(default_replay_lease) + ":" + s.store;
    give_lease_back_on_signal(s.store.starts_with("kafka:") ? s.state : s.store, s.replay.lease, s.replay.owner);
  }
  auto store = open_store(s);
  if (!store) {
    complain("replay", store.error().message);
    return store.error().exit_code;
  }
  no_replay_state nothing;
  replay_state& state = store->state ? *store->state : static_cast<replay_state&>(nothing);

  // A dry run calls no model: any client will do, and none is opened.
  std::unique_ptr<llm_client> client;
  if (!s.model_url.empty()) {
    openai_compatible_client_options options;
    options.base_url = s.model_url;
    options.api_key = std::move(api_key);
    options.timeout = s.timeout;
    auto opened = openai_compatible_client::open(std::move(options));
    if (!opened) {
      complain("replay", opened.error().message);
      return exit_usage;
    }
    client = std::make_unique<openai_compatible_client>(std::move(*opened));
  } else {
    struct unused_client final : llm_client {
      expected<completion, call_error> complete(const llm_request&) override {
        return unexpected(call_error{{call_verdict::retry_later, "no_model_url", {}, {}}, {}, "no --model-url", {}});
      }
      std::string endpoint() const override { return "none"; }
    };
    client = std::make_unique<unused_client>();
  }
  auto ladder = recovery_ladder::create(*schema_text, *client, s.ladder);
  if (!ladder) {
    complain("replay", fmt::format("{}: {}", s.schema_file, ladder.error().message));
    return exit_usage;
  }
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  s.replay.progress = [terminal](const replay_progress& p) {
    if (terminal) {
      std::cerr << fmt::format("\rreplay: {} read, {} replayed", detail::counted(p.seen, "letter"), p.done)
                << std::flush;
    } else if (p.done % 100 == 0) {
      std::cerr << fmt::format("replay: {} read, {} replayed\n", detail::counted(p.seen, "letter"), p.done);
    }
  };
  replayer run(*ladder, *store->source, state, s.replay);
  if (target) run.deliver_to(*target);
  auto summary = run.run();
  if (terminal) std::cerr << '\n';
  if (!summary) {
    complain("replay", summary.error().message);
    if (summary.error().code == replay_state_errc::lease_held) {
      std::cerr << fmt::format("another replay ({}) holds the lease", summary.error().holder) << '\n';
      return exit_busy;
    }
    return exit_sink;
  }
  print_summary(s, *summary);
  if (!std::cout.flush()) {
    complain("replay", "cannot write the summary to standard output: what the run did is in the store");
    return exit_sink;
  }
  return exit_ok;
}

}  // namespace llmdlq::cli
