// SPDX-License-Identifier: MIT
// `llmdlq export`: a DLQ's letters as a dataset, one JSON line per letter
// (schemas/export-v1.json), filtered as `list` filters, redacted as stored.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/field_cipher.hpp>
#include <llmdlq/moderation_query.hpp>
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "line_writer.hpp"
#include "options.hpp"
#include "query_flags.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option run_options[] = {
    {"--limit", option_kind::value, "N", "letters at most (default: all that match)"},
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
    {"--keys", option_kind::value, "DIR", "the key directory that opens the sealed originals, with --unseal"},
    {"--unseal", option_kind::flag, "",
     "write the sealed originals in clear instead of the redacted texts (needs\n--keys): the dataset then holds "
     "what redaction removed"},
#endif
};
constexpr operand operands[] = {{"STORE", "give the DLQ to export"}};

const command_syntax syntax{
    .command = "export",
    .operands = operands,
    .groups = {group("filters (a repeated filter matches any of its values)", query_filter_options),
               group("export", run_options)},
    .about = "  Writes the dead letters that match as a dataset on standard output, oldest first, one JSON\n"
             "  object per letter (schemas/export-v1.json): versions, the input's reference and stored text,\n"
             "  the failed output, the errors, category and triage class, and the recovered or\n"
             "  operator-corrected output when there is one. Texts are as stored: redacted, sealed\n"
             "  originals left sealed unless --unseal. It reads the store page by page and changes nothing.\n",
    .stores = store_forms(),
    .closing = "A letter whose record does not read back is skipped and named on stderr. Exit 0, 2 for usage\n"
               "errors and a SQLite DLQ that is missing, 3 when the store fails or standard output cannot be\n"
               "written, 6 when it skipped letters that do not read back.\n",
};

constexpr std::size_t page_size = 200;

// Whether redaction changed `field` of the envelope.
bool redacted(const boost::json::object& e, std::string_view field) {
  const auto* list = e.if_contains("redactions");
  if (list == nullptr || !list->is_array()) return false;
  return std::any_of(list->as_array().begin(), list->as_array().end(), [&](const boost::json::value& r) {
    const auto* f = r.is_object() ? r.as_object().if_contains("field") : nullptr;
    return f != nullptr && f->is_string() && f->as_string() == field;
  });
}

// A stored text as the dataset gives it: the text, its length and hash, and
// how it was stored (cut, base64, redacted, sealed), or its original when
// `opened` holds it.
boost::json::object text_view(const boost::json::object& stored, bool was_redacted, const opened_text* opened) {
  boost::json::object out;
  for (const std::string_view key : {"text", "length", "sha256", "cut", "encoding"}) {
    if (const auto* v = stored.if_contains(key)) out.emplace(key, *v);
  }
  if (was_redacted) out.emplace("redacted", true);
  if (const auto* sealed = stored.if_contains("sealed"); sealed && sealed->is_object()) {
    if (const auto* key = sealed->as_object().if_contains("key_id")) out.emplace("sealed_with", *key);
  }
  if (opened == nullptr) return out;
  if (!opened->original) {
    out.emplace("unseal_error", opened->original.error().message);
    return out;
  }
  const auto original = captured_text::of(*opened->original);
  out["text"] = *original.text;
  out.erase("encoding");
  if (original.base64) out.emplace("encoding", "base64");
  out.erase("cut");
  if (opened->cut) out.emplace("cut", true);
  out.erase("redacted");
  out.emplace("unsealed", true);
  return out;
}

// The opened copy of `field`, when the letter's sealed originals were opened.
const opened_text* opened_field(const std::vector<opened_text>& opened, std::string_view field) {
  const auto it = std::find_if(opened.begin(), opened.end(), [&](const opened_text& o) { return o.field == field; });
  return it == opened.end() ? nullptr : &*it;
}

// The output a letter came to: a person's correction, or what a replay or
// a redriven input recovered.
std::optional<boost::json::object> output_of(const moderation_record& r) {
  if (!r.resolution) return std::nullopt;
  boost::json::object out{{"source", r.status == moderation_status::resolved ? "operator" : "recovered"}};
  boost::system::error_code ec;
  auto value = boost::json::parse(*r.resolution, ec);
  if (ec) {
    out.emplace("text", *r.resolution);
  } else {
    out.emplace("value", std::move(value));
  }
  return out;
}

// One letter's line; `cipher` set when its sealed originals are to be opened.
boost::json::object export_record(const moderation_record& r, const boost::json::object& e,
                                  const field_cipher* cipher) {
  std::vector<opened_text> opened;
  if (cipher != nullptr) {
    if (auto letter = parse_envelope(r.envelope_json)) opened = open_sealed(*letter, *cipher);
  }
  boost::json::object out{{"export_version", "1"},      {"dlq_id", r.dlq_id},     {"status", to_string(r.status)},
                          {"created_at", r.created_at}, {"category", r.category}, {"triage", r.triage}};
  for (const std::string_view key : {"idempotency_key", "record_id", "prompt", "model"}) {
    if (const auto* v = e.if_contains(key)) out.emplace(key, *v);
  }
  const auto* versions = e.if_contains("versions");
  out.emplace("versions", versions != nullptr ? *versions : boost::json::object());
  boost::json::object input;
  if (const auto* ref = e.if_contains("source_ref")) input.emplace("ref", *ref);
  if (const auto* stored = e.if_contains("original_input"); stored && stored->is_object()) {
    input.emplace("stored", text_view(stored->as_object(), redacted(e, "original_input"),
                                      opened_field(opened, sealed_original_input)));
  }
  out.emplace("input", std::move(input));
  if (const auto* raw = e.if_contains("raw_response"); raw && raw->is_object()) {
    out.emplace("failed_output",
                text_view(raw->as_object(), redacted(e, "raw_response"), opened_field(opened, sealed_raw_response)));
  }
  if (const auto* failure = e.if_contains("failure")) out.emplace("failure", *failure);
  if (auto output = output_of(r)) out.emplace("output", std::move(*output));
  return out;
}

struct export_counts {
  std::uint64_t exported = 0;
  std::uint64_t with_output = 0;
  std::uint64_t unreadable = 0;
  std::vector<unreadable_record> unreadable_records;
};

// Writes every matching letter, a page at a time; an error message and its exit code, or nothing.
std::optional<std::pair<int, std::string>> export_letters(moderation_store& store, moderation_query query,
                                                          std::uint64_t limit, const field_cipher* cipher,
                                                          line_writer& out, export_counts& counts) {
  query.limit = page_size;
  for (;;) {
    auto page = store.query(query);
    if (!page) return std::pair{static_cast<int>(exit_sink), page.error().message};
    for (const auto& r : page->records) {
      if (limit > 0 && counts.exported == limit) return std::nullopt;
      boost::system::error_code ec;
      const auto e = r.readable() ? boost::json::parse(r.envelope_json, ec) : boost::json::value();
      if (!r.readable() || ec || !e.is_object()) {
        ++counts.unreadable;
        if (counts.unreadable_records.size() < max_listed_unreadable) {
          counts.unreadable_records.push_back({r.dlq_id, r.readable() ? "envelope: not JSON" : r.defect_reason});
        }
        continue;
      }
      const auto line = export_record(r, e.as_object(), cipher);
      counts.with_output += line.contains("output");
      if (!out.write_line(json_text(line)))
        return std::pair{static_cast<int>(exit_sink), out.failure("standard output")};
      ++counts.exported;
    }
    if (!page->more || !page->next) return std::nullopt;
    query.after = std::move(page->next);
  }
}

}  // namespace

int export_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  moderation_query query;
  if (auto e = read_query_filters(*parsed, system_now(), query)) return usage_error(syntax, *e);
  std::uint64_t limit = 0;
  if (const auto v = parsed->value("--limit")) {
    const auto n = parse_count(*v);
    if (!n) return usage_error(syntax, fmt::format("--limit wants a number, not '{}'", *v));
    limit = *n;
  }
  const field_cipher* cipher = nullptr;
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  const auto keys = parsed->value("--keys");
  if (parsed->has("--unseal") != keys.has_value()) {
    return usage_error(syntax, keys ? "--keys is only for --unseal: without it the sealed originals stay sealed"
                                    : "--unseal needs the key directory: give --keys DIR");
  }
  std::optional<sodium_field_cipher> opener;
  if (keys) {
    opener.emplace(std::make_shared<file_key_provider>(std::string(*keys)));
    cipher = &*opener;
  }
#endif
  const auto spec = parse_store_spec(parsed->operand(0));
  if (!spec) return usage_error(syntax, spec.error());
  auto store = open_store(*spec, /*read_only=*/true);
  if (!store) {
    complain("export", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  line_writer out(STDOUT_FILENO);
  export_counts counts;
  auto failed = export_letters(**store, std::move(query), limit, cipher, out, counts);
  if (!failed && !out.flush()) failed = std::pair{static_cast<int>(exit_sink), out.failure("standard output")};
  report_unreadable("export", counts.unreadable_records, counts.unreadable);
  if (failed) {
    complain("export", failed->second);
    return failed->first;
  }
  complain("export", fmt::format("{} exported, {} of them with an output{}", detail::counted(counts.exported, "letter"),
                                 counts.with_output, cipher != nullptr ? ", sealed originals opened" : ""));
  return exit_for_unreadable(counts.unreadable);
}

}  // namespace llmdlq::cli
