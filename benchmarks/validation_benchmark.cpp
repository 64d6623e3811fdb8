// SPDX-License-Identifier: MIT
// Bytes in, verdict out: llmdlq against simdjson's parse alone, RapidJSON's
// fused SAX schema validator and valijson, on receipts of 300 B to 256 KB.
//
// Every validator is first checked to accept the benchmark documents and to
// reject a document for each keyword it claims to enforce; the run stops
// before any timing if one disagrees, since timing a validator that rejects
// (or ignores) the input would compare nothing.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <rapidjson/document.h>
#include <rapidjson/reader.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>
// With VALIJSON_USE_EXCEPTIONS, valijson's adapter redefines RAPIDJSON_ASSERT
// as a throwing check. RapidJSON keeps its release behaviour here (assert,
// off under NDEBUG); valijson itself still throws on a bad schema.
#include <valijson/exceptions.hpp>
#pragma push_macro("VALIJSON_USE_EXCEPTIONS")
#undef VALIJSON_USE_EXCEPTIONS
#include <valijson/adapters/rapidjson_adapter.hpp>
#pragma pop_macro("VALIJSON_USE_EXCEPTIONS")
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/version.hpp>

#include "documents.hpp"

#define LLMDLQ_BENCH_STRINGIFY_(x) #x
#define LLMDLQ_BENCH_STRINGIFY(x) LLMDLQ_BENCH_STRINGIFY_(x)

#ifndef LLMDLQ_BENCH_DATA_DIR
#  define LLMDLQ_BENCH_DATA_DIR "examples/data"
#endif

namespace {

using llmdlq_bench::make_receipt;

// ---------------------------------------------------------------------------
// The receipt schema in the dialects the peers implement.

/// How the draft 2020-12 schema is rewritten for a peer.
struct dialect {
  const char* name;
  const char* schema_uri;
  bool boolean_exclusive_bounds;  ///< draft-04: `exclusiveMinimum: true` beside `minimum`
  bool keep_format;
  bool keep_fractional_multiple_of;
};

// RapidJSON 1.1.0 implements draft-04 without `format`. Its multipleOf test
// in binary floating point (a - floor(a/b)*b > 0) rejects ordinary amounts:
// 1.19 and 2.38 are not multiples of 0.01 to it, so a fractional multipleOf
// is left out.
constexpr dialect rapidjson_dialect{"RapidJSON (draft-04)", "http://json-schema.org/draft-04/schema#",
                                    true, false, false};
// valijson 1.0 reads draft-07; it checks the formats date, time and date-time
// and passes every other format. Its multipleOf test (|remainder(a, b)| <=
// DBL_EPSILON) also rejects ordinary amounts (23.47, 62.55 for 0.01).
constexpr dialect valijson_dialect{"valijson (draft-07)", "http://json-schema.org/draft-07/schema#",
                                   false, true, false};
constexpr dialect valijson_no_format_dialect{"valijson (draft-07, no format)",
                                             "http://json-schema.org/draft-07/schema#", false, false,
                                             false};

// Keywords the rewrite understands; any other keyword in the schema stops the
// benchmark rather than be translated silently wrong.
constexpr std::string_view known_keywords[] = {
    "$schema", "$id",      "title",     "description", "type",      "enum",
    "required", "properties", "additionalProperties", "items", "minItems", "maxItems",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "pattern", "format"};

class schema_rewriter {
 public:
  schema_rewriter(const dialect& d, rapidjson::Document::AllocatorType& allocator)
      : dialect_(d), allocator_(allocator) {}

  /// Rewrites the schema object `s` in place; false (with a message) on a keyword it cannot translate.
  bool rewrite(rapidjson::Value& s, const std::string& where) {
    if (!s.IsObject()) return true;
    // `x-` keywords are annotations (llmdlq's content rules among them), which
    // schema::is_valid does not check either: dropped, with a note.
    for (auto member = s.MemberBegin(); member != s.MemberEnd();) {
      const std::string_view key(member->name.GetString(), member->name.GetStringLength());
      if (key.starts_with("x-")) {
        note(where, "dropped annotation " + std::string(key));
        member = s.EraseMember(member);
        continue;
      }
      ++member;
    }
    for (auto& member : s.GetObject()) {
      const std::string_view key(member.name.GetString(), member.name.GetStringLength());
      if (std::find(std::begin(known_keywords), std::end(known_keywords), key) == std::end(known_keywords)) {
        std::fprintf(stderr, "schema keyword %s at %s has no translation for %s\n", key.data(),
                     where.c_str(), dialect_.name);
        return false;
      }
    }
    if (s.HasMember("properties")) {
      for (auto& property : s["properties"].GetObject()) {
        if (!rewrite(property.value, where + "/properties/" + property.name.GetString())) return false;
      }
    }
    if (s.HasMember("items") && !rewrite(s["items"], where + "/items")) return false;
    if (s.HasMember("additionalProperties") &&
        !rewrite(s["additionalProperties"], where + "/additionalProperties")) {
      return false;
    }

    if (s.HasMember("$id")) s.RemoveMember("$id");
    if (s.HasMember("$schema")) s["$schema"].SetString(rapidjson::StringRef(dialect_.schema_uri));
    if (dialect_.boolean_exclusive_bounds) {
      to_boolean_bound(s, "exclusiveMinimum", "minimum", where);
      to_boolean_bound(s, "exclusiveMaximum", "maximum", where);
    }
    if (!dialect_.keep_format && s.HasMember("format")) {
      note(where, std::string("dropped format \"") + s["format"].GetString() + "\"");
      s.RemoveMember("format");
    }
    if (!dialect_.keep_fractional_multiple_of && s.HasMember("multipleOf") && !s["multipleOf"].IsInt64()) {
      note(where, "dropped multipleOf " + std::to_string(s["multipleOf"].GetDouble()));
      s.RemoveMember("multipleOf");
    }
    return true;
  }

  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }

 private:
  // Draft 6 turned `exclusiveMinimum` from a flag on `minimum` into a number of its own.
  void to_boolean_bound(rapidjson::Value& s, const char* exclusive, const char* inclusive,
                        const std::string& where) {
    if (!s.HasMember(exclusive) || !s[exclusive].IsNumber()) return;
    if (s.HasMember(inclusive)) {
      std::fprintf(stderr, "%s has both %s and %s; no draft-04 equivalent\n", where.c_str(),
                   exclusive, inclusive);
      std::exit(EXIT_FAILURE);
    }
    rapidjson::Value bound(s[exclusive], allocator_);
    s.AddMember(rapidjson::StringRef(inclusive), bound, allocator_);
    s[exclusive].SetBool(true);
    note(where, std::string("rewrote ") + exclusive + " as the draft-04 boolean form");
  }

  void note(const std::string& where, std::string what) {
    notes_.push_back(std::string(dialect_.name) + " " + (where.empty() ? "/" : where) + ": " + std::move(what));
  }

  const dialect& dialect_;
  rapidjson::Document::AllocatorType& allocator_;
  std::vector<std::string> notes_;
};

std::optional<std::string> rewrite_schema(const std::string& schema_text, const dialect& d,
                                          std::vector<std::string>& notes) {
  rapidjson::Document schema;
  schema.Parse(schema_text.c_str());
  if (schema.HasParseError()) return std::nullopt;
  schema_rewriter rewriter(d, schema.GetAllocator());
  if (!rewriter.rewrite(schema, "")) return std::nullopt;
  notes.insert(notes.end(), rewriter.notes().begin(), rewriter.notes().end());
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  schema.Accept(writer);
  return std::string(text.GetString(), text.GetSize());
}

// ---------------------------------------------------------------------------
// The validators, each set up once and reused for every document, as a
// service would hold them.

/// One benchmark document, kept both as a plain string (RapidJSON reads it
/// NUL-terminated) and in simdjson's padded form (parsed in place).
struct document {
  std::string name;
  std::string text;
  simdjson::padded_string padded;

  document(std::string n, std::string t) : name(std::move(n)), text(std::move(t)), padded(text) {}
};

/// simdjson's DOM parse and nothing else: the floor under any validator on simdjson.
class simdjson_floor {
 public:
  bool operator()(const document& doc) { return parser_.parse(doc.padded).error() == simdjson::SUCCESS; }

 private:
  simdjson::dom::parser parser_;
};

/// llmdlq as a host uses it: one json_parser per thread, the schema compiled once.
class llmdlq_validator {
 public:
  explicit llmdlq_validator(llmdlq::schema schema) : schema_(std::move(schema)) {}

  /// Parses in place (the padded input) and answers yes or no.
  bool operator()(const document& doc) {
    auto parsed = parser_.parse(simdjson::padded_string_view(doc.padded));
    return parsed && schema_.is_valid(*parsed);
  }

  /// Parses a copy of an unpadded string, and answers yes or no.
  bool copy_and_validate(const document& doc) {
    auto parsed = parser_.parse(std::string_view(doc.text));
    return parsed && schema_.is_valid(*parsed);
  }

  /// The dead-letter path: the yes/no pass, then every error of a failing document.
  std::size_t count_errors(const document& doc) {
    auto parsed = parser_.parse(simdjson::padded_string_view(doc.padded));
    if (!parsed) return 1;
    if (schema_.is_valid(*parsed)) return 0;
    return schema_.validate(*parsed).size();
  }

 private:
  llmdlq::schema schema_;
  llmdlq::json_parser parser_;
};

/// RapidJSON's fastest validation path: the SAX reader drives the schema
/// validator directly, with no DOM (what SchemaValidatingReader does, minus
/// the document it populates). UTF-8 is validated, as simdjson does.
class rapidjson_sax_validator {
 public:
  explicit rapidjson_sax_validator(const std::string& schema_text) {
    schema_json_.Parse(schema_text.c_str());
    schema_.emplace(schema_json_);
    validator_.emplace(*schema_);
  }

  bool operator()(const document& doc) {
    validator_->Reset();
    rapidjson::StringStream in(doc.text.c_str());
    const bool parsed = !reader_.Parse<rapidjson::kParseValidateEncodingFlag>(in, *validator_).IsError();
    return parsed && validator_->IsValid();
  }

 private:
  rapidjson::Document schema_json_;
  std::optional<rapidjson::SchemaDocument> schema_;
  std::optional<rapidjson::SchemaValidator> validator_;
  rapidjson::Reader reader_;
};

/// valijson over a RapidJSON document. The DOM lives in a pool reserved once
/// and reset per document, so no allocation is timed that a careful host
/// would avoid; the validator keeps its cache of compiled patterns.
class valijson_validator {
 public:
  valijson_validator(const std::string& schema_text, std::size_t largest_document)
      : pool_(8 * largest_document + (64u << 10)),
        allocator_(pool_.data(), pool_.size()),
        document_(&allocator_) {
    rapidjson::Document schema_json;
    schema_json.Parse(schema_text.c_str());
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::RapidJsonAdapter adapter(schema_json);
    parser.populateSchema(adapter, schema_);
  }

  bool operator()(const document& doc) {
    allocator_.Clear();
    document_.Parse<rapidjson::kParseValidateEncodingFlag>(doc.text.c_str());
    if (document_.HasParseError()) return false;
    const valijson::adapters::RapidJsonAdapter instance(document_);
    return validator_.validate(schema_, instance, nullptr);
  }

 private:
  std::vector<char> pool_;
  rapidjson::MemoryPoolAllocator<> allocator_;
  rapidjson::Document document_;
  valijson::Schema schema_;
  valijson::Validator validator_;
};

// ---------------------------------------------------------------------------
// Setup and the checks that run before any timing.

struct fixture {
  std::string schema_text;  // draft 2020-12, as shipped in examples/data
  std::string draft04_text;
  std::string draft07_text;
  std::string draft07_no_format_text;
  std::vector<std::unique_ptr<document>> documents;  // ~300 B, ~1 KB, ~16 KB, ~256 KB
  std::unique_ptr<document> invalid_1kb;

  std::unique_ptr<simdjson_floor> floor;
  std::unique_ptr<llmdlq_validator> llmdlq;
  std::unique_ptr<llmdlq_validator> llmdlq_no_format;
  std::unique_ptr<rapidjson_sax_validator> rapidjson;
  std::unique_ptr<valijson_validator> valijson;
  std::unique_ptr<valijson_validator> valijson_no_format;
};

constexpr unsigned format_faults = llmdlq_bench::impossible_date | llmdlq_bench::bad_date_time |
                                   llmdlq_bench::bad_uuid | llmdlq_bench::bad_iban_checksum |
                                   llmdlq_bench::bad_email;
constexpr unsigned all_faults = (llmdlq_bench::total_not_in_cents << 1) - 1;

struct fault_name {
  unsigned fault;
  const char* keyword;
};
constexpr fault_name fault_names[] = {
    {llmdlq_bench::extra_item_field, "additionalProperties"},
    {llmdlq_bench::missing_currency, "required"},
    {llmdlq_bench::unknown_currency, "enum"},
    {llmdlq_bench::bad_sku, "pattern"},
    {llmdlq_bench::zero_quantity, "exclusiveMinimum"},
    {llmdlq_bench::negative_unit_price, "minimum"},
    {llmdlq_bench::total_as_string, "type"},
    {llmdlq_bench::long_description, "maxLength"},
    {llmdlq_bench::impossible_date, "format:date"},
    {llmdlq_bench::bad_date_time, "format:date-time"},
    {llmdlq_bench::bad_uuid, "format:uuid"},
    {llmdlq_bench::bad_iban_checksum, "format:iban"},
    {llmdlq_bench::bad_email, "format:email"},
    {llmdlq_bench::total_not_in_cents, "multipleOf"},
};

template <class Validator>
struct contender {
  const char* name;
  Validator* validator;
  unsigned enforces;  // the faults it must reject; it must accept the others
};

// Every contender accepts every benchmark document, and rejects a 1 KB
// receipt with a single fault exactly when it enforces that keyword.
template <class Validator>
bool check(const contender<Validator>& c, const fixture& f) {
  bool ok = true;
  for (const auto& doc : f.documents) {
    if (!(*c.validator)(*doc)) {
      std::fprintf(stderr, "FAIL: %s rejects the valid %s document\n", c.name, doc->name.c_str());
      ok = false;
    }
  }
  std::string enforced, ignored;
  for (const auto& [fault, keyword] : fault_names) {
    const document faulty("faulty", make_receipt(1024, fault));
    const bool rejected = !(*c.validator)(faulty);
    const bool should_reject = (c.enforces & fault) != 0;
    if (rejected != should_reject) {
      std::fprintf(stderr, "FAIL: %s %s a receipt that breaks %s\n", c.name,
                   rejected ? "rejects" : "accepts", keyword);
      ok = false;
    }
    (rejected ? enforced : ignored) += std::string(" ") + keyword;
  }
  std::fprintf(stderr, "  %-34s enforces:%s\n  %-34s ignores: %s\n", c.name, enforced.c_str(), "",
               ignored.empty() ? "(nothing)" : ignored.c_str() + 1);
  return ok;
}

llmdlq::compile_options compile_options(bool format_assertion) {
  llmdlq::compile_options options;
  options.format_assertion = format_assertion;
  return options;
}

std::unique_ptr<llmdlq_validator> make_llmdlq(const std::string& text, bool format_assertion) {
  auto schema = llmdlq::schema::compile(text, compile_options(format_assertion));
  if (!schema) {
    std::fprintf(stderr, "llmdlq cannot compile the receipt schema: %s at %s\n",
                 schema.error().message.c_str(), schema.error().location.c_str());
    return nullptr;
  }
  return std::make_unique<llmdlq_validator>(*std::move(schema));
}

bool set_up(fixture& f) {
  const std::string path = LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json";
  auto text = llmdlq_bench::read_file(path);
  if (!text) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  f.schema_text = *std::move(text);

  std::vector<std::string> notes;
  auto draft04 = rewrite_schema(f.schema_text, rapidjson_dialect, notes);
  auto draft07 = rewrite_schema(f.schema_text, valijson_dialect, notes);
  auto draft07_plain = rewrite_schema(f.schema_text, valijson_no_format_dialect, notes);
  if (!draft04 || !draft07 || !draft07_plain) return false;
  f.draft04_text = *std::move(draft04);
  f.draft07_text = *std::move(draft07);
  f.draft07_no_format_text = *std::move(draft07_plain);
  std::fprintf(stderr, "Peer schemas, derived from %s:\n", path.c_str());
  for (const auto& n : notes) std::fprintf(stderr, "  %s\n", n.c_str());

  const std::pair<const char*, std::size_t> sizes[] = {
      {"300B", 300}, {"1KB", 1024}, {"16KB", 16u << 10}, {"256KB", 256u << 10}};
  for (const auto& [name, bytes] : sizes) {
    f.documents.push_back(std::make_unique<document>(name, make_receipt(bytes)));
  }
  f.invalid_1kb = std::make_unique<document>(
      "1KB", make_receipt(1024, llmdlq_bench::impossible_date | llmdlq_bench::unknown_currency |
                                    llmdlq_bench::zero_quantity | llmdlq_bench::extra_item_field |
                                    llmdlq_bench::bad_iban_checksum | llmdlq_bench::total_as_string));
  std::fprintf(stderr, "Documents:");
  for (const auto& doc : f.documents) std::fprintf(stderr, " %s=%zu B", doc->name.c_str(), doc->text.size());
  std::fprintf(stderr, ", invalid 1KB=%zu B\n", f.invalid_1kb->text.size());

  f.floor = std::make_unique<simdjson_floor>();
  f.llmdlq = make_llmdlq(f.schema_text, true);
  f.llmdlq_no_format = make_llmdlq(f.schema_text, false);
  if (!f.llmdlq || !f.llmdlq_no_format) return false;
  try {
    f.rapidjson = std::make_unique<rapidjson_sax_validator>(f.draft04_text);
    const std::size_t largest = f.documents.back()->text.size();
    f.valijson = std::make_unique<valijson_validator>(f.draft07_text, largest);
    f.valijson_no_format = std::make_unique<valijson_validator>(f.draft07_no_format_text, largest);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a peer cannot load its schema: %s\n", e.what());
    return false;
  }

  using namespace llmdlq_bench;
  constexpr unsigned multiple_of = total_not_in_cents;
  std::fprintf(stderr, "Checks (every validator accepts every document; single-fault 1 KB receipts):\n");
  bool ok = check(contender<simdjson_floor>{"simdjson parse (no schema)", f.floor.get(), 0}, f);
  ok &= check(contender<llmdlq_validator>{"llmdlq", f.llmdlq.get(), all_faults}, f);
  ok &= check(contender<llmdlq_validator>{"llmdlq (no format)", f.llmdlq_no_format.get(),
                                          all_faults & ~format_faults},
              f);
  ok &= check(contender<rapidjson_sax_validator>{"RapidJSON SAX (draft-04)", f.rapidjson.get(),
                                                 all_faults & ~format_faults & ~multiple_of},
              f);
  ok &= check(contender<valijson_validator>{"valijson (draft-07)", f.valijson.get(),
                                            (all_faults & ~format_faults & ~multiple_of) |
                                                impossible_date | bad_date_time},
              f);
  ok &= check(contender<valijson_validator>{"valijson (draft-07, no format)", f.valijson_no_format.get(),
                                            all_faults & ~format_faults & ~multiple_of},
              f);
  const std::size_t errors = f.llmdlq->count_errors(*f.invalid_1kb);
  if (errors < 6) {
    std::fprintf(stderr, "FAIL: llmdlq reports %zu errors on the invalid receipt, expected 6\n", errors);
    ok = false;
  }
  return ok;
}

// ---------------------------------------------------------------------------
// Scenarios.

template <class Run>
void add_validation(const std::string& scenario, const document& doc, Run run) {
  benchmark::RegisterBenchmark((scenario + "/" + doc.name).c_str(), [&doc, run](benchmark::State& state) mutable {
    for (auto _ : state) {
      const bool valid = run(doc);
      benchmark::DoNotOptimize(valid);
      if (!valid) {
        state.SkipWithError("the document was rejected");
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(doc.text.size()));
    state.counters["doc_bytes"] = static_cast<double>(doc.text.size());
  });
}

template <class Compile>
void add_compile(const std::string& scenario, const std::string& schema_text, Compile compile) {
  benchmark::RegisterBenchmark(scenario.c_str(), [&schema_text, compile](benchmark::State& state) {
    for (auto _ : state) {
      const bool compiled = compile(schema_text);
      benchmark::DoNotOptimize(compiled);
      if (!compiled) {
        state.SkipWithError("the schema did not compile");
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(schema_text.size()));
  });
}

void register_benchmarks(fixture& f) {
  for (const auto& d : f.documents) {
    const document& doc = *d;
    add_validation("simdjson_parse_only", doc, [&f](const document& x) { return (*f.floor)(x); });
    add_validation("llmdlq_validate", doc, [&f](const document& x) { return (*f.llmdlq)(x); });
    add_validation("llmdlq_validate_no_format", doc,
                   [&f](const document& x) { return (*f.llmdlq_no_format)(x); });
    add_validation("llmdlq_validate_unpadded", doc,
                   [&f](const document& x) { return f.llmdlq->copy_and_validate(x); });
    add_validation("rapidjson_sax_validate", doc, [&f](const document& x) { return (*f.rapidjson)(x); });
    add_validation("valijson_validate", doc, [&f](const document& x) { return (*f.valijson)(x); });
    add_validation("valijson_validate_no_format", doc,
                   [&f](const document& x) { return (*f.valijson_no_format)(x); });
  }

  const document& invalid = *f.invalid_1kb;
  benchmark::RegisterBenchmark(("llmdlq_validate_collect_errors/" + invalid.name).c_str(),
                               [&f, &invalid](benchmark::State& state) {
                                 std::size_t errors = 0;
                                 for (auto _ : state) {
                                   errors = f.llmdlq->count_errors(invalid);
                                   benchmark::DoNotOptimize(errors);
                                 }
                                 state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                                         static_cast<std::int64_t>(invalid.text.size()));
                                 state.counters["doc_bytes"] = static_cast<double>(invalid.text.size());
                                 state.counters["errors"] = static_cast<double>(errors);
                               });

  add_compile("llmdlq_compile_receipt_schema", f.schema_text, [](const std::string& text) {
    auto schema = llmdlq::schema::compile(text, compile_options(true));
    benchmark::DoNotOptimize(schema);
    return schema.has_value();
  });
  add_compile("rapidjson_compile_receipt_schema", f.draft04_text, [](const std::string& text) {
    rapidjson::Document json;
    json.Parse(text.c_str());
    const rapidjson::SchemaDocument schema(json);
    benchmark::DoNotOptimize(&schema);
    return !json.HasParseError();
  });
  add_compile("valijson_compile_receipt_schema", f.draft07_text, [](const std::string& text) {
    rapidjson::Document json;
    json.Parse(text.c_str());
    valijson::Schema schema;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    parser.populateSchema(valijson::adapters::RapidJsonAdapter(json), schema);
    benchmark::DoNotOptimize(&schema);
    return !json.HasParseError();
  });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return EXIT_FAILURE;

  static fixture f;  // outlives every registered benchmark
  if (!set_up(f)) {
    std::fprintf(stderr, "Not timing: the validators do not agree on the inputs (see above).\n");
    return EXIT_FAILURE;
  }
  benchmark::AddCustomContext("llmdlq", LLMDLQ_VERSION_STRING);
  benchmark::AddCustomContext("simdjson", std::string(LLMDLQ_BENCH_STRINGIFY(SIMDJSON_VERSION)) + " (" +
                                              simdjson::get_active_implementation()->name() + ")");
  benchmark::AddCustomContext("rapidjson", std::to_string(RAPIDJSON_MAJOR_VERSION) + "." +
                                               std::to_string(RAPIDJSON_MINOR_VERSION) + "." +
                                               std::to_string(RAPIDJSON_PATCH_VERSION));
  for (const auto& doc : f.documents) {
    benchmark::AddCustomContext("doc_" + doc->name, std::to_string(doc->text.size()) + " B");
  }

  register_benchmarks(f);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}
