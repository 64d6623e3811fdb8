// SPDX-License-Identifier: MIT
// Differential fuzzing of validation while parsing, on documents made to fit
// a schema. The input's bytes choose a schema (shapes users bring, in four
// drafts, and the receipt and envelope schemas of this tree), then every
// choice of a document it describes: which optional members, how many
// items, which branch, which value; then at most one value changed, and how
// the text is spelled (compact or indented, escapes). is_valid_text, read
// from a string or in place from padded bytes, must give the verdict of
// parse + is_valid on each.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/detail/json/utf8.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

namespace {

namespace json = boost::json;

// Schemas shaped like those users bring: nested objects with references,
// tuples, recursion, formats, older drafts' spellings and combinators.
constexpr std::string_view inline_schemas[] = {
    R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "additionalProperties": false, "required": ["id", "customer", "lines"],
        "$defs": {
          "address": {"type": "object", "required": ["city"],
                      "properties": {"city": {"type": "string", "minLength": 1},
                                     "zip": {"type": "string", "pattern": "^[0-9]{4,5}$"}}},
          "line": {"type": "object", "required": ["sku", "qty", "price"], "additionalProperties": false,
                   "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
                                  "qty": {"type": "integer", "exclusiveMinimum": 0, "maximum": 1000},
                                  "price": {"type": "number", "minimum": 0, "multipleOf": 0.01}}}},
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "placed": {"type": "string", "format": "date-time"},
          "customer": {"type": "object", "required": ["email"],
                       "properties": {"email": {"type": "string", "format": "email"},
                                      "site": {"type": "string", "format": "hostname"},
                                      "address": {"$ref": "#/$defs/address"}},
                       "dependentRequired": {"site": ["email"]},
                       "propertyNames": {"maxLength": 12}},
          "lines": {"type": "array", "minItems": 1, "maxItems": 6, "items": {"$ref": "#/$defs/line"}},
          "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
          "status": {"enum": ["open", "paid", null, 3]},
          "version": {"const": 2},
          "notes": {"type": ["string", "null"], "maxLength": 40}}})",
    R"({"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
          "node": {"type": "object", "required": ["name"],
                   "properties": {"name": {"type": "string"},
                                  "weight": {"type": "number", "exclusiveMaximum": 100},
                                  "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}],
                                           "additionalItems": false},
                                  "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
                   "additionalProperties": {"type": "boolean"}}},
        "$ref": "#/definitions/node"})",
    R"({"$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object", "required": ["amount", "when"],
        "properties": {"amount": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
                       "when": {"type": "string", "format": "date"},
                       "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                       "tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "maxItems": 4},
                       "ip": {"type": "string", "format": "ipv4"}},
        "additionalProperties": false})",
    R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"choice": {"oneOf": [{"type": "integer"}, {"type": "string", "format": "date"}]},
                       "either": {"anyOf": [{"type": "object", "required": ["a"]}, {"type": "array"}]},
                       "both": {"allOf": [{"type": "string"}, {"minLength": 3}]},
                       "never": {"not": {"type": "null"}},
                       "cond": {"if": {"type": "integer"}, "then": {"minimum": 10}, "else": {"type": "string"}}},
        "required": ["choice"]})",
    R"({"$schema": "https://json-schema.org/draft/2019-09/schema",
        "type": "object", "unevaluatedProperties": false,
        "properties": {"list": {"type": "array", "contains": {"type": "integer"}, "minContains": 1,
                                "uniqueItems": true, "items": {"type": ["integer", "string"]}},
                       "map": {"type": "object", "patternProperties": {"^x-": {"type": "string"}},
                               "additionalProperties": {"type": "integer"}}},
        "$defs": {"unused": {"type": "null"}}})",
    R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "array", "maxItems": 8,
        "items": {"type": "object", "required": ["name", "email"],
                  "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 30},
                                 "email": {"type": "string", "format": "email"},
                                 "age": {"type": "integer", "minimum": 0, "maximum": 150},
                                 "score": {"type": "number"},
                                 "active": {"type": "boolean"},
                                 "tags": {"type": "array", "items": {"type": "string"}}},
                  "additionalProperties": {"type": "string"}}})",
};

// The trees' own schemas, read from the source tree.
constexpr const char* schema_files[] = {"examples/data/receipt.schema.json", "schemas/envelope-v1.json"};

constexpr std::size_t schema_count = std::size(inline_schemas) + std::size(schema_files);

struct compiled {
  json::value tree;
  llmdlq::schema with_formats, without_formats;
};

std::string schema_text(std::size_t i) {
  if (i < std::size(inline_schemas)) return std::string(inline_schemas[i]);
  std::ifstream in(std::string(LLMDLQ_SOURCE_DIR) + "/" + schema_files[i - std::size(inline_schemas)],
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const compiled& schema_at(std::size_t i) {
  static std::vector<std::optional<compiled>> cache(schema_count);
  if (!cache[i]) {
    const std::string text = schema_text(i);
    llmdlq::compile_options with, without;
    with.format_assertion = true;
    without.format_assertion = false;
    auto a = llmdlq::schema::compile(text, with);
    auto b = llmdlq::schema::compile(text, without);
    if (!a || !b) {
      std::fprintf(stderr, "fuzz_forward_pass: schema %zu does not compile\n", i);
      std::abort();
    }
    cache[i].emplace(compiled{json::parse(text), *std::move(a), *std::move(b)});
  }
  return *cache[i];
}

// The input's bytes, read as choices; zeros once they run out. A zero
// makes the choice a model following the schema would make, so that short
// inputs give valid documents and the fuzzer's changes break them.
class choices {
 public:
  explicit choices(std::string_view bytes) : bytes_(bytes) {}
  unsigned below(unsigned n) {
    if (n <= 1 || at_ == bytes_.size()) return 0;
    return static_cast<unsigned char>(bytes_[at_++]) % n;
  }
  bool coin() { return below(2) == 1; }
  /// True one time in `n`, never for a zero.
  bool rarely(unsigned n) { return below(n) == n - 1; }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// Values that pass (or nearly pass) each format.
json::value format_sample(std::string_view format, choices& c) {
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> samples = {
      {"date", {"2024-02-29", "2023-02-29", "1999-12-31", "2024-1-01"}},
      {"date-time", {"2024-05-01T10:20:30Z", "2024-05-01T10:20:30.5+02:00", "2024-05-01 10:20:30", "2024-13-01T00:00:00Z"}},
      {"email", {"ana@example.com", "\"a b\"@example.org", "no-at-sign", "a@b@c"}},
      {"hostname", {"example.com", "xn--bcher-kva.example", "-bad-.com", "a.b"}},
      {"uuid", {"0191b2c4-7e2a-7cc0-9a4e-1f2d3c4b5a69", "not-a-uuid", "0191b2c47e2a7cc09a4e1f2d3c4b5a69"}},
      {"ipv4", {"192.168.0.1", "256.1.1.1", "01.2.3.4"}},
      {"iban", {"NL91ABNA0417164300", "NL91ABNA0417164301"}},
      {"uri", {"https://example.com/a?b#c", "relative/path", "http://[::1]:80/"}},
  };
  for (const auto& [name, values] : samples) {  // the first fits; the others mostly not
    if (name == format) return json::string(values[c.rarely(2) ? c.below(static_cast<unsigned>(values.size())) : 0]);
  }
  return json::string("x");
}

// Values that fit (or nearly fit) the patterns of the schemas above.
json::value pattern_sample(std::string_view pattern, choices& c) {
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> samples = {
      {"^[0-9]{4,5}$", {"1234", "12a4"}},
      {"^[A-Z]{3}-[0-9]+$", {"ABC-12", "AB-1"}},
      {"^[0-9]{4}$", {"4242", "42"}},
      {"^[A-Z]{2}[0-9A-Z]{2,13}$", {"NL123456789B01", "nl12"}},
      {"^[A-Z0-9-]{3,32}$", {"SKU-001", "a"}},
      {"^[a-z0-9_.-]+$", {"ocr.schema_invalid", "Bad Code"}},
      {"^[0-9a-f]{64}$", {"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9F86"}},
      {"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
       {"2026-12-05T10:20:30.123Z", "2026-12-05T10:20:30Z"}},
      {"^[0-9a-f]{8}-[0-9a-f]{4}-[78][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
       {"0191b2c4-7e2a-7cc0-9a4e-1f2d3c4b5a69", "0191b2c4-7e2a-4cc0-9a4e-1f2d3c4b5a69"}},
  };
  for (const auto& [source, values] : samples) {
    if (source == pattern) return json::string(values[c.rarely(4) ? 1 : 0]);
  }
  return json::string("x");
}

// Strings with what model replies hold: accents, quotes, newlines, emoji.
json::string some_string(choices& c, std::size_t min_length, std::size_t max_length) {
  static constexpr std::string_view pieces[] = {"a", "Z", "7", " ", "é", "\"", "\\", "\n", "/", "😀", "-", "\t", "ß"};
  const std::size_t span = max_length > min_length ? std::min<std::size_t>(max_length - min_length, 8) : 0;
  const std::size_t length = min_length + c.below(static_cast<unsigned>(span + 1));
  std::string s;
  for (std::size_t i = 0; i < std::min<std::size_t>(length, 64); ++i) s += pieces[c.below(std::size(pieces))];
  return json::string(s);
}

json::value some_scalar(choices& c) {
  switch (c.below(7)) {
    case 0: return nullptr;
    case 1: return c.coin();
    case 2: return static_cast<std::int64_t>(c.below(200)) - 100;
    case 3: return static_cast<double>(c.below(20000)) / 100.0 - 50.0;
    case 4: return 1e300;
    case 5: return json::array{};
    default: return some_string(c, 0, 6);
  }
}

double number_in(const json::object& s, choices& c, bool integer) {
  auto bound = [&](const char* key) -> std::optional<double> {
    const auto* v = s.if_contains(key);
    if (v && v->is_number()) return v->to_number<double>();
    return std::nullopt;
  };
  // Exclusive bounds: a number (draft 6 on) or a flag on the inclusive one (draft 4).
  auto exclusive = [&](const char* key) {
    const auto* v = s.if_contains(key);
    return v && (v->is_number() || (v->is_bool() && v->get_bool()));
  };
  const double step = integer ? 1 : 0.01;
  const double low = bound("minimum").value_or(bound("exclusiveMinimum").value_or(-20)) +
                     (exclusive("exclusiveMinimum") ? step : 0);
  const double high = bound("maximum").value_or(bound("exclusiveMaximum").value_or(low + 40)) -
                      (exclusive("exclusiveMaximum") ? step : 0);
  const double span = std::max(0.0, (high - low) / step);
  const double value = low + step * static_cast<double>(c.below(static_cast<unsigned>(std::min(span, 250.0)) + 1));
  return integer ? std::floor(value) : std::round(value * 100) / 100;
}

// A value for a schema, as a model following it would write one (most of
// the time: the choices also leave members out and pick values at random).
class generator {
 public:
  generator(const json::value& root, choices& c) : root_(root), c_(c) {}

  json::value value(const json::value& schema, int depth) {
    if (--budget_ < 0 || depth > 10 || !schema.is_object()) return some_scalar(c_);
    const json::object& s = schema.get_object();
    if (const auto* ref = s.if_contains("$ref"); ref && ref->is_string() && !c_.rarely(8)) {
      if (const json::value* target = resolve(ref->get_string())) return value(*target, depth + 1);
    }
    if (const auto* v = s.if_contains("const")) return *v;
    if (const auto* v = s.if_contains("enum"); v && v->is_array() && !v->get_array().empty()) {
      const auto& options = v->get_array();
      return options[c_.below(static_cast<unsigned>(options.size()))];
    }
    for (const char* key : {"oneOf", "anyOf", "allOf"}) {
      if (const auto* v = s.if_contains(key); v && v->is_array() && !v->get_array().empty()) {
        const auto& branches = v->get_array();
        return value(branches[c_.below(static_cast<unsigned>(branches.size()))], depth + 1);
      }
    }
    const std::string type = type_of(s);
    if (type == "object") return object(s, depth);
    if (type == "array") return array(s, depth);
    if (type == "string") {
      if (const auto* p = s.if_contains("pattern"); p && p->is_string() && !c_.rarely(8)) {
        return pattern_sample(p->get_string(), c_);
      }
      if (const auto* f = s.if_contains("format"); f && f->is_string() && !c_.rarely(8)) {
        return format_sample(f->get_string(), c_);
      }
      auto length = [&](const char* key, std::size_t otherwise) {
        const auto* v = s.if_contains(key);
        return v && v->is_int64() ? static_cast<std::size_t>(v->get_int64()) : otherwise;
      };
      return some_string(c_, length("minLength", 0), length("maxLength", 12));
    }
    if (type == "integer") return static_cast<std::int64_t>(number_in(s, c_, true));
    if (type == "number") return number_in(s, c_, c_.coin());
    if (type == "boolean") return c_.coin();
    if (type == "null") return nullptr;
    return some_scalar(c_);
  }

 private:
  // The type a model would read: one of `type`, else what the keywords suggest.
  std::string type_of(const json::object& s) {
    if (const auto* t = s.if_contains("type")) {
      if (t->is_string()) return std::string(t->get_string());
      if (t->is_array() && !t->get_array().empty()) {
        const auto& types = t->get_array();
        const auto& pick = types[c_.below(static_cast<unsigned>(types.size()))];
        if (pick.is_string()) return std::string(pick.get_string());
      }
    }
    if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties")) return "object";
    if (s.contains("items") || s.contains("prefixItems")) return "array";
    if (s.contains("minLength") || s.contains("pattern") || s.contains("format")) return "string";
    if (s.contains("minimum") || s.contains("maximum")) return "number";
    return "";
  }

  const json::value* resolve(std::string_view ref) const {
    if (ref.empty() || ref.front() != '#') return nullptr;
    boost::system::error_code ec;
    const json::value* target = root_.find_pointer(ref.substr(1), ec);
    return ec ? nullptr : target;
  }

  json::value object(const json::object& s, int depth) {
    json::object out;
    std::vector<std::string_view> required;
    if (const auto* r = s.if_contains("required"); r && r->is_array()) {
      for (const auto& name : r->get_array()) {
        if (name.is_string()) required.push_back(name.get_string());
      }
    }
    static const json::value anything = json::object{};
    const json::value* extra = &anything;
    if (const auto* a = s.if_contains("additionalProperties")) extra = a;
    if (const auto* p = s.if_contains("properties"); p && p->is_object()) {
      for (const auto& [key, sub] : p->get_object()) {
        const bool needed = std::find(required.begin(), required.end(), key) != required.end();
        if ((needed && !c_.rarely(16)) || (!needed && c_.coin())) out[key] = value(sub, depth + 1);
      }
      // minProperties: the optional ones in order, up to it.
      const auto* least = s.if_contains("minProperties");
      for (const auto& [key, sub] : p->get_object()) {
        if (!least || !least->is_int64() || static_cast<std::int64_t>(out.size()) >= least->get_int64()) break;
        if (!out.contains(key)) out[key] = value(sub, depth + 1);
      }
    }
    for (const auto name : required) {
      if (!out.contains(name) && !c_.rarely(16)) out[name] = value(*extra, depth + 1);
    }
    if (c_.rarely(8)) out[c_.coin() ? "x-extra" : "extra"] = value(*extra, depth + 1);
    return out;
  }

  json::value array(const json::object& s, int depth) {
    const json::array* tuple = nullptr;
    if (const auto* p = s.if_contains("prefixItems"); p && p->is_array()) tuple = &p->get_array();
    const json::value* rest = s.if_contains("items");
    if (rest && rest->is_array()) {  // draft 4 to 7: items as a tuple, additionalItems for the rest
      tuple = &rest->get_array();
      rest = s.if_contains("additionalItems");
    }
    auto bound = [&](const char* key, std::size_t otherwise) {
      const auto* v = s.if_contains(key);
      return v && v->is_int64() ? static_cast<std::size_t>(v->get_int64()) : otherwise;
    };
    const std::size_t low = bound("minItems", 0);
    const std::size_t count = low + c_.below(static_cast<unsigned>(std::min<std::size_t>(bound("maxItems", low + 4) - low, 6) + 1));
    json::array out;
    static const json::value anything = json::object{};
    for (std::size_t i = 0; i < count; ++i) {
      const json::value* item = tuple && i < tuple->size() ? &(*tuple)[i] : (rest ? rest : &anything);
      out.push_back(value(*item, depth + 1));
    }
    return out;
  }

  const json::value& root_;
  choices& c_;
  int budget_ = 400;
};

// Changes the n-th scalar of `v` (in document order) to another value;
// returns how many scalars remain before it.
std::size_t change_scalar(json::value& v, std::size_t n, choices& c) {
  if (auto* o = v.if_object()) {
    for (auto& member : *o) {
      n = change_scalar(member.value(), n, c);
      if (n == static_cast<std::size_t>(-1)) return n;
    }
    return n;
  }
  if (auto* a = v.if_array()) {
    for (auto& item : *a) {
      n = change_scalar(item, n, c);
      if (n == static_cast<std::size_t>(-1)) return n;
    }
    return n;
  }
  if (n == 0) {
    v = some_scalar(c);
    return static_cast<std::size_t>(-1);
  }
  return n - 1;
}

// JSON text of `v`: compact or indented, non-ASCII as itself or as \u
// escapes (surrogate pairs beyond the BMP), `/` as itself or `\/`,
// fractions in their shortest form or with two decimals.
struct spelling {
  bool indent, escape_non_ascii, escape_slash, fixed_decimals;
};

void write_string(std::string_view s, const spelling& how, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if (byte >= 0x80 && how.escape_non_ascii) {
      const auto decoded = llmdlq::detail::decode_utf8(s.substr(i));
      char32_t code = decoded.value_or(U'\uFFFD');
      i += decoded ? llmdlq::detail::utf8_sequence_length(byte) : 1;
      auto unit = [&](unsigned u) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\u%04x", u);
        out += hex;
      };
      if (code >= 0x10000) {
        code -= 0x10000;
        unit(0xD800 + (code >> 10));
        unit(0xDC00 + (code & 0x3FF));
      } else {
        unit(code);
      }
      continue;
    }
    ++i;
    switch (byte) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '/': out += how.escape_slash ? "\\/" : "/"; break;
      default:
        if (byte < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", byte);
          out += hex;
        } else {
          out += static_cast<char>(byte);
        }
    }
  }
  out += '"';
}

void write(const json::value& v, const spelling& how, int depth, std::string& out) {
  auto newline = [&](int d) {
    if (!how.indent) return;
    out += '\n';
    out.append(static_cast<std::size_t>(2 * d), ' ');
  };
  if (const auto* o = v.if_object()) {
    out += '{';
    bool first = true;
    for (const auto& member : *o) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      write_string(member.key(), how, out);
      out += how.indent ? ": " : ":";
      write(member.value(), how, depth + 1, out);
    }
    if (!o->empty()) newline(depth);
    out += '}';
  } else if (const auto* a = v.if_array()) {
    out += '[';
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (i) out += ',';
      newline(depth + 1);
      write((*a)[i], how, depth + 1, out);
    }
    if (!a->empty()) newline(depth);
    out += ']';
  } else if (const auto* s = v.if_string()) {
    write_string(*s, how, out);
  } else if (const auto* d = v.if_double()) {
    // The shortest spelling that reads back, as most writers use
    // (`12.5`, `1e+300`), or with two decimals (`12.50`) where it is short.
    char digits[64];
    const bool two_decimals = how.fixed_decimals && std::fabs(*d) < 1e9;
    const auto written = two_decimals ? std::to_chars(digits, digits + sizeof digits, *d, std::chars_format::fixed, 2)
                                      : std::to_chars(digits, digits + sizeof digits, *d);
    out.append(digits, written.ptr);
  } else {
    out += json::serialize(v);
  }
}

[[noreturn]] void disagree(const char* what, std::size_t schema, const std::string& text) {
  std::fprintf(stderr, "fuzz_forward_pass: %s (schema %zu)\n%.4000s\n", what, schema, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  choices c(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::size_t which = c.below(schema_count);
  const bool formats = c.coin();
  const compiled& s = schema_at(which);
  generator make(s.tree, c);
  json::value document = make.value(s.tree, 0);
  if (c.rarely(3)) change_scalar(document, c.below(64), c);
  const spelling how{c.coin(), c.coin(), c.coin(), c.coin()};
  std::string text;
  write(document, how, 0, text);

  const llmdlq::schema& schema = formats ? s.with_formats : s.without_formats;
  llmdlq::validate_options rules;
  rules.now = llmdlq::timestamp{std::chrono::sys_days{std::chrono::year{2025} / 1 / 1}};  // not-future rules
  static llmdlq::json_parser parser;
  const auto doc = parser.parse(text);
  const bool expected = doc && schema.is_valid(*doc, rules);
  if (schema.is_valid_text(text, rules) != expected) disagree("is_valid_text disagrees with parse + is_valid", which, text);
  // In place, with padding that looks like JSON.
  std::string padded = text;
  padded.append(simdjson::SIMDJSON_PADDING, '"');
  const simdjson::padded_string_view view(padded.data(), text.size(), padded.size());
  if (schema.is_valid_text(view, rules) != expected) disagree("is_valid_text in place disagrees", which, text);
  return 0;
}
