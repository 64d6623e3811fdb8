// SPDX-License-Identifier: MIT
// Bytes in, verdict out: llmdlq against simdjson's parse alone, RapidJSON's
// fused SAX schema validator and valijson, on two families of documents of
// 300 B to 256 KB: compact receipts (scenario/<size>) and pretty-printed,
// format-heavy batches of user records (scenario/users_<size>).
//
// Every validator is first checked to accept the benchmark documents and to
// reject a document for each keyword it claims to enforce; the run stops
// before any timing if one disagrees, since timing a validator that rejects
// (or ignores) the input would compare nothing.
//
// usage: validation_benchmark [--write-inputs=DIR] [BENCHMARK FLAGS...]
//   --write-inputs=DIR  write every family's schema (draft 2020-12) and
//                       documents to DIR, with DIR/manifest.json listing
//                       [{"name": "<family>/<size>", "schema", "document",
//                       "bytes"}], and exit

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
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
#ifndef LLMDLQ_BENCH_OWN_DATA_DIR
#  define LLMDLQ_BENCH_OWN_DATA_DIR "benchmarks/data"
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
  /// The peer applies `format` to values of any type (valijson 1.0 reads a
  /// null as the empty string, which no date-time matches): format is kept
  /// only where the type admits strings alone.
  bool format_checks_every_type = false;
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
                                   false, true, false, true};
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
    if (dialect_.keep_format && dialect_.format_checks_every_type && s.HasMember("format") &&
        !(s.HasMember("type") && s["type"].IsString() && std::string_view(s["type"].GetString()) == "string")) {
      note(where, std::string("dropped format \"") + s["format"].GetString() +
                      "\" (its type admits more than strings, and the peer would check a null too)");
      s.RemoveMember("format");
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

  /// Validates while parsing (is_valid_text), in place: no tape, no document.
  bool forward(const document& doc) { return schema_.is_valid_text(simdjson::padded_string_view(doc.padded)); }

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
// Document families, and the checks that run before any timing.

/// A fault a generated document can carry, and the keyword that must reject it.
struct fault_name {
  unsigned fault;
  const char* keyword;  ///< `format:<name>` for a format assertion
};

/// Which keywords a contender is expected to enforce.
enum class enforcement {
  nothing,            ///< a parser alone
  everything,         ///< llmdlq with format assertion
  all_but_formats,    ///< llmdlq without format assertion
  draft04_peer,       ///< RapidJSON: no format, no fractional multipleOf
  draft07_peer,       ///< valijson: formats date, time and date-time only; no fractional multipleOf
  draft07_no_format,  ///< valijson without format
};

bool enforces(enforcement e, std::string_view keyword) {
  const bool format = keyword.starts_with("format:");
  switch (e) {
    case enforcement::nothing: return false;
    case enforcement::everything: return true;
    case enforcement::all_but_formats: return !format;
    case enforcement::draft04_peer:
    case enforcement::draft07_no_format: return !format && keyword != "multipleOf";
    case enforcement::draft07_peer:
      return keyword == "format:date" || keyword == "format:date-time" ||
             (!format && keyword != "multipleOf");
  }
  return false;
}

/// One family of benchmark documents: a schema, its peers' rewrites, the
/// documents at each size, and every validator set up for it.
struct family {
  family(std::string n, std::string path, std::string (*m)(std::size_t, unsigned), std::vector<fault_name> fs)
      : name(std::move(n)), schema_path(std::move(path)), make(m), faults(std::move(fs)) {}

  std::string name;  ///< "receipt", "users"
  std::string schema_path;
  std::string (*make)(std::size_t, unsigned);
  std::vector<fault_name> faults;

  std::string schema_text;  // draft 2020-12, as the file holds it
  std::string draft04_text;
  std::string draft07_text;
  std::string draft07_no_format_text;
  std::vector<std::unique_ptr<document>> documents;  // ~300 B, ~1 KB, ~16 KB, ~256 KB

  std::unique_ptr<simdjson_floor> floor;
  std::unique_ptr<llmdlq_validator> llmdlq;
  std::unique_ptr<llmdlq_validator> llmdlq_no_format;
  std::unique_ptr<rapidjson_sax_validator> rapidjson;
  std::unique_ptr<valijson_validator> valijson;
  std::unique_ptr<valijson_validator> valijson_no_format;
};

struct fixture {
  std::vector<std::unique_ptr<family>> families;  // receipts first
  std::unique_ptr<document> invalid_1kb;          // a receipt with six faults
};

std::string make_receipt_document(std::size_t bytes, unsigned faults) { return make_receipt(bytes, faults); }
std::string make_users_document(std::size_t bytes, unsigned faults) {
  return llmdlq_bench::make_users(bytes, faults);
}

std::vector<fault_name> receipt_faults() {
  using namespace llmdlq_bench;
  return {
      {extra_item_field, "additionalProperties"},
      {missing_currency, "required"},
      {unknown_currency, "enum"},
      {bad_sku, "pattern"},
      {zero_quantity, "exclusiveMinimum"},
      {negative_unit_price, "minimum"},
      {total_as_string, "type"},
      {long_description, "maxLength"},
      {impossible_date, "format:date"},
      {bad_date_time, "format:date-time"},
      {bad_uuid, "format:uuid"},
      {bad_iban_checksum, "format:iban"},
      {bad_email, "format:email"},
      {total_not_in_cents, "multipleOf"},
  };
}

std::vector<fault_name> users_faults() {
  using namespace llmdlq_bench;
  return {
      {user_extra_field, "additionalProperties"},
      {user_missing_email, "required"},
      {user_unknown_role, "enum"},
      {user_active_as_string, "type"},
      {user_empty_name, "minLength"},
      {user_bad_id, "format:uuid"},
      {user_bad_email, "format:email"},
      {user_bad_created_at, "format:date-time"},
  };
}

template <class Validator>
struct contender {
  const char* name;
  Validator* validator;
  enforcement enforces;
};

// Every contender accepts every document of the family, and rejects a 1 KB
// document with a single fault exactly when it enforces that keyword.
template <class Validator>
bool check(const contender<Validator>& c, const family& f) {
  bool ok = true;
  for (const auto& doc : f.documents) {
    if (!(*c.validator)(*doc)) {
      std::fprintf(stderr, "FAIL: %s rejects the valid %s %s document\n", c.name, f.name.c_str(),
                   doc->name.c_str());
      ok = false;
    }
  }
  std::string enforced, ignored;
  for (const auto& [fault, keyword] : f.faults) {
    const document faulty("faulty", f.make(1024, fault));
    const bool rejected = !(*c.validator)(faulty);
    if (rejected != enforces(c.enforces, keyword)) {
      std::fprintf(stderr, "FAIL: %s %s a %s document that breaks %s\n", c.name,
                   rejected ? "rejects" : "accepts", f.name.c_str(), keyword);
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
    std::fprintf(stderr, "llmdlq cannot compile the schema: %s at %s\n", schema.error().message.c_str(),
                 schema.error().location.c_str());
    return nullptr;
  }
  return std::make_unique<llmdlq_validator>(*std::move(schema));
}

constexpr std::pair<const char*, std::size_t> sizes[] = {
    {"300B", 300}, {"1KB", 1024}, {"16KB", 16u << 10}, {"256KB", 256u << 10}};

/// Reads the family's schema and generates its documents; the receipts'
/// documents are named by size alone, the others' `<family>_<size>`.
bool load(family& f) {
  auto text = llmdlq_bench::read_file(f.schema_path);
  if (!text) {
    std::fprintf(stderr, "cannot read %s\n", f.schema_path.c_str());
    return false;
  }
  f.schema_text = *std::move(text);
  for (const auto& [size, bytes] : sizes) {
    f.documents.push_back(std::make_unique<document>(
        f.name == "receipt" ? std::string(size) : f.name + "_" + size, f.make(bytes, 0)));
  }
  return true;
}

bool set_up(family& f) {
  std::vector<std::string> notes;
  auto draft04 = rewrite_schema(f.schema_text, rapidjson_dialect, notes);
  auto draft07 = rewrite_schema(f.schema_text, valijson_dialect, notes);
  auto draft07_plain = rewrite_schema(f.schema_text, valijson_no_format_dialect, notes);
  if (!draft04 || !draft07 || !draft07_plain) return false;
  f.draft04_text = *std::move(draft04);
  f.draft07_text = *std::move(draft07);
  f.draft07_no_format_text = *std::move(draft07_plain);
  std::fprintf(stderr, "Peer schemas, derived from %s:\n", f.schema_path.c_str());
  for (const auto& n : notes) std::fprintf(stderr, "  %s\n", n.c_str());
  std::fprintf(stderr, "Documents (%s):", f.name.c_str());
  for (const auto& doc : f.documents) std::fprintf(stderr, " %s=%zu B", doc->name.c_str(), doc->text.size());
  std::fprintf(stderr, "\n");

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

  std::fprintf(stderr, "Checks (%s: every validator accepts every document; single-fault 1 KB documents):\n",
               f.name.c_str());
  bool ok = check(contender<simdjson_floor>{"simdjson parse (no schema)", f.floor.get(), enforcement::nothing}, f);
  ok &= check(contender<llmdlq_validator>{"llmdlq", f.llmdlq.get(), enforcement::everything}, f);
  ok &= check(contender<llmdlq_validator>{"llmdlq (no format)", f.llmdlq_no_format.get(),
                                          enforcement::all_but_formats},
              f);
  ok &= check(contender<rapidjson_sax_validator>{"RapidJSON SAX (draft-04)", f.rapidjson.get(),
                                                 enforcement::draft04_peer},
              f);
  ok &= check(contender<valijson_validator>{"valijson (draft-07)", f.valijson.get(), enforcement::draft07_peer},
              f);
  ok &= check(contender<valijson_validator>{"valijson (draft-07, no format)", f.valijson_no_format.get(),
                                            enforcement::draft07_no_format},
              f);
  return ok;
}

fixture make_fixture() {
  fixture f;
  f.families.push_back(std::make_unique<family>("receipt", LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json",
                                                make_receipt_document, receipt_faults()));
  f.families.push_back(std::make_unique<family>("users", LLMDLQ_BENCH_OWN_DATA_DIR "/users.schema.json",
                                                make_users_document, users_faults()));
  f.invalid_1kb = std::make_unique<document>(
      "1KB", make_receipt(1024, llmdlq_bench::impossible_date | llmdlq_bench::unknown_currency |
                                    llmdlq_bench::zero_quantity | llmdlq_bench::extra_item_field |
                                    llmdlq_bench::bad_iban_checksum | llmdlq_bench::total_as_string));
  return f;
}

bool set_up(fixture& f) {
  for (auto& fam : f.families) {
    if (!load(*fam) || !set_up(*fam)) return false;
  }
  const std::size_t errors = f.families.front()->llmdlq->count_errors(*f.invalid_1kb);
  if (errors < 6) {
    std::fprintf(stderr, "FAIL: llmdlq reports %zu errors on the invalid receipt, expected 6\n", errors);
    return false;
  }
  return true;
}

/// Writes every family's schema (the draft 2020-12 file) and documents to
/// `dir`, with dir/manifest.json listing them, for peers timed elsewhere.
bool write_inputs(fixture& f, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto write = [&dir](const std::string& file, const std::string& text) {
    std::ofstream out(dir / file, std::ios::binary);
    out << text;
    if (!out) std::fprintf(stderr, "cannot write %s\n", (dir / file).c_str());
    return static_cast<bool>(out);
  };
  rapidjson::StringBuffer manifest;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> json(manifest);
  json.StartArray();
  for (auto& fam : f.families) {
    if (!load(*fam)) return false;
    const std::string schema_file = fam->name + ".schema.json";
    if (!write(schema_file, fam->schema_text)) return false;
    for (std::size_t i = 0; i < fam->documents.size(); ++i) {
      const document& doc = *fam->documents[i];
      const std::string size = sizes[i].first;
      const std::string document_file = fam->name + "_" + size + ".json";
      if (!write(document_file, doc.text)) return false;
      json.StartObject();
      json.Key("name");
      json.String((fam->name + "/" + size).c_str());
      json.Key("schema");
      json.String(schema_file.c_str());
      json.Key("document");
      json.String(document_file.c_str());
      json.Key("bytes");
      json.Uint64(doc.text.size());
      json.EndObject();
    }
  }
  json.EndArray();
  if (!write("manifest.json", std::string(manifest.GetString(), manifest.GetSize()) + "\n")) return false;
  std::fprintf(stderr, "wrote the inputs and %s\n", (dir / "manifest.json").c_str());
  return true;
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
  for (const auto& fam : f.families) {
    family& v = *fam;
    for (const auto& d : v.documents) {
      const document& doc = *d;
      add_validation("simdjson_parse_only", doc, [&v](const document& x) { return (*v.floor)(x); });
      add_validation("llmdlq_validate", doc, [&v](const document& x) { return (*v.llmdlq)(x); });
      add_validation("llmdlq_is_valid_text", doc, [&v](const document& x) { return v.llmdlq->forward(x); });
      add_validation("llmdlq_validate_no_format", doc,
                     [&v](const document& x) { return (*v.llmdlq_no_format)(x); });
      add_validation("llmdlq_validate_unpadded", doc,
                     [&v](const document& x) { return v.llmdlq->copy_and_validate(x); });
      add_validation("rapidjson_sax_validate", doc, [&v](const document& x) { return (*v.rapidjson)(x); });
      add_validation("valijson_validate", doc, [&v](const document& x) { return (*v.valijson)(x); });
      add_validation("valijson_validate_no_format", doc,
                     [&v](const document& x) { return (*v.valijson_no_format)(x); });
    }
  }

  family& receipts = *f.families.front();
  const document& invalid = *f.invalid_1kb;
  benchmark::RegisterBenchmark(("llmdlq_validate_collect_errors/" + invalid.name).c_str(),
                               [&receipts, &invalid](benchmark::State& state) {
                                 std::size_t errors = 0;
                                 for (auto _ : state) {
                                   errors = receipts.llmdlq->count_errors(invalid);
                                   benchmark::DoNotOptimize(errors);
                                 }
                                 state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                                         static_cast<std::int64_t>(invalid.text.size()));
                                 state.counters["doc_bytes"] = static_cast<double>(invalid.text.size());
                                 state.counters["errors"] = static_cast<double>(errors);
                               });

  add_compile("llmdlq_compile_receipt_schema", receipts.schema_text, [](const std::string& text) {
    auto schema = llmdlq::schema::compile(text, compile_options(true));
    benchmark::DoNotOptimize(schema);
    return schema.has_value();
  });
  add_compile("rapidjson_compile_receipt_schema", receipts.draft04_text, [](const std::string& text) {
    rapidjson::Document json;
    json.Parse(text.c_str());
    const rapidjson::SchemaDocument schema(json);
    benchmark::DoNotOptimize(&schema);
    return !json.HasParseError();
  });
  add_compile("valijson_compile_receipt_schema", receipts.draft07_text, [](const std::string& text) {
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
  static fixture f = make_fixture();  // outlives every registered benchmark
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--write-inputs=")) {
      return write_inputs(f, std::filesystem::path(arg.substr(15))) ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return EXIT_FAILURE;

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
  for (const auto& fam : f.families) {
    for (const auto& doc : fam->documents) {
      benchmark::AddCustomContext("doc_" + doc->name, std::to_string(doc->text.size()) + " B");
    }
  }

  register_benchmarks(f);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}
