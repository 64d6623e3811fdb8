// SPDX-License-Identifier: MIT
// Deterministic LLM-like JSON responses for the repair benchmark: invoices
// as a chat model writes them (pretty-printed, two-space indentation), of
// about 1 KB, 16 KB and 256 KB, each with one kind of failure applied
// throughout, together with the document the model meant.
//
// The same kind and size always give the same bytes, on every machine.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "documents.hpp"  // rng, the product lines, append_cents, append_quantity

namespace llmdlq_bench::repair {

/// How the model's output went wrong; `valid` is the pass-through baseline.
enum class failure_kind : std::uint8_t {
  valid,                 ///< already valid JSON
  trailing_commas,       ///< a comma after the last member of every object and array
  missing_commas,        ///< no comma between any two members or elements
  single_quotes,         ///< every key and string in '...'
  unquoted_keys,         ///< every key bare: `line: 3`
  python_literals,       ///< True, False, None
  comments,              ///< a `//` line before every item and section, `/* */` after some values
  control_characters,    ///< raw newlines and tabs inside strings
  markdown_fence_prose,  ///< the valid document in ```json fences, with prose before and after
  truncated,             ///< the valid document cut off at ~90 %, inside a string
};

inline constexpr failure_kind all_kinds[] = {
    failure_kind::valid,          failure_kind::trailing_commas,    failure_kind::missing_commas,
    failure_kind::single_quotes,  failure_kind::unquoted_keys,      failure_kind::python_literals,
    failure_kind::comments,       failure_kind::control_characters, failure_kind::markdown_fence_prose,
    failure_kind::truncated,
};

inline constexpr std::string_view name(failure_kind k) noexcept {
  switch (k) {
    case failure_kind::valid: return "valid";
    case failure_kind::trailing_commas: return "trailing_commas";
    case failure_kind::missing_commas: return "missing_commas";
    case failure_kind::single_quotes: return "single_quotes";
    case failure_kind::unquoted_keys: return "unquoted_keys";
    case failure_kind::python_literals: return "python_literals";
    case failure_kind::comments: return "comments";
    case failure_kind::control_characters: return "control_characters";
    case failure_kind::markdown_fence_prose: return "markdown_fence_prose";
    case failure_kind::truncated: return "truncated";
  }
  return "valid";
}

struct input_size {
  std::string_view name;
  std::size_t bytes;
};
inline constexpr input_size all_sizes[] = {
    {"300B", 300}, {"1KB", 1024}, {"16KB", 16 * 1024}, {"256KB", 256 * 1024}};

/// One benchmark input: what the model returned, and what it meant.
struct generated {
  std::string input;
  std::string expected;  ///< strict JSON; compared with a repair as parsed values
};

namespace detail {

/// How a writer spells JSON: strictly, or with one failure throughout.
enum class style : std::uint8_t {
  valid,
  trailing_commas,
  missing_commas,
  single_quotes,
  unquoted_keys,
  python_literals,
  comments,
  control_characters,
};

/// A pretty-printing JSON writer that can make one kind of mistake everywhere.
class json_writer {
 public:
  explicit json_writer(style s) : style_(s) {}

  void begin_object() { open('{', '}', false); }
  /// `inline_elements`: `["a", "b"]` on one line, as models write short lists.
  void begin_array(bool inline_elements = false) { open('[', ']', inline_elements); }
  void end() {
    const frame f = frames_.back();
    frames_.pop_back();
    if (f.count > 0) {
      if (style_ == style::trailing_commas) out_ += ',';
      if (!f.inline_elements) newline();
    }
    out_ += f.close;
  }

  void key(std::string_view k) {
    separator();
    if (style_ == style::unquoted_keys) {
      out_ += k;
    } else {
      quoted(k);
    }
    out_ += ": ";
    after_key_ = true;
  }

  void string(std::string_view v) {
    before_value();
    const std::size_t begin = out_.size() + 1;
    quoted(v);
    value_strings_.emplace_back(begin, out_.size() - 1);
  }
  void number(std::string_view text) {
    before_value();
    out_ += text;
  }
  void boolean(bool b) {
    before_value();
    if (style_ == style::python_literals) {
      out_ += b ? "True" : "False";
    } else {
      out_ += b ? "true" : "false";
    }
  }
  void null() {
    before_value();
    out_ += style_ == style::python_literals ? "None" : "null";
  }

  /// A `// text` line before the next member or element (comments style only).
  void comment(std::string_view text) {
    if (style_ == style::comments) pending_comment_ = text;
  }
  /// ` /* text */` right after the value just written (comments style only).
  void inline_comment(std::string_view text) {
    if (style_ != style::comments) return;
    out_ += " /* ";
    out_ += text;
    out_ += " */";
  }

  [[nodiscard]] const std::string& text() const noexcept { return out_; }
  [[nodiscard]] std::string take() { return std::move(out_); }
  /// [begin, end) of the content of every string value written, in order.
  [[nodiscard]] const std::vector<std::pair<std::size_t, std::size_t>>& value_strings() const noexcept {
    return value_strings_;
  }

 private:
  struct frame {
    char close;
    bool inline_elements;
    std::size_t count;
  };

  void open(char c, char close, bool inline_elements) {
    before_value();
    out_ += c;
    frames_.push_back({close, inline_elements, 0});
  }

  void newline() {
    out_ += '\n';
    out_.append(2 * frames_.size(), ' ');
  }

  void separator() {
    if (frames_.empty()) return;
    frame& f = frames_.back();
    if (f.count > 0 && style_ != style::missing_commas) out_ += ',';
    if (f.inline_elements) {
      if (f.count > 0) out_ += ' ';
    } else {
      if (!pending_comment_.empty()) {
        newline();
        out_ += "// ";
        out_ += pending_comment_;
        pending_comment_.clear();
      }
      newline();
    }
    ++f.count;
  }

  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    separator();
  }

  void quoted(std::string_view text) {
    const char q = style_ == style::single_quotes ? '\'' : '"';
    out_ += q;
    for (const char c : text) {
      if (c == q || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if ((c == '\n' || c == '\t') && style_ != style::control_characters) {
        out_ += c == '\n' ? "\\n" : "\\t";
      } else {
        out_ += c;
      }
    }
    out_ += q;
  }

  style style_;
  std::string out_;
  std::vector<frame> frames_;
  bool after_key_ = false;
  std::string pending_comment_;
  std::vector<std::pair<std::size_t, std::size_t>> value_strings_;
};

/// Two writers fed the same calls: what the model wrote and what it meant.
class twin_writer {
 public:
  explicit twin_writer(style s) : in_(s), want_(style::valid) {}
  void begin_object() { in_.begin_object(), want_.begin_object(); }
  void begin_array(bool inline_elements = false) {
    in_.begin_array(inline_elements), want_.begin_array(inline_elements);
  }
  void end() { in_.end(), want_.end(); }
  void key(std::string_view k) { in_.key(k), want_.key(k); }
  void string(std::string_view v) { in_.string(v), want_.string(v); }
  void number(std::string_view v) { in_.number(v), want_.number(v); }
  void boolean(bool b) { in_.boolean(b), want_.boolean(b); }
  void null() { in_.null(), want_.null(); }
  void comment(std::string_view t) { in_.comment(t); }
  void inline_comment(std::string_view t) { in_.inline_comment(t); }

  void member(std::string_view k, std::string_view v) { key(k), string(v); }
  void member_number(std::string_view k, std::string_view v) { key(k), number(v); }
  void member_bool(std::string_view k, bool b) { key(k), boolean(b); }
  void member_null(std::string_view k) { key(k), null(); }

  [[nodiscard]] std::size_t size() const noexcept { return in_.text().size(); }
  json_writer& input() noexcept { return in_; }
  json_writer& intended() noexcept { return want_; }

 private:
  json_writer in_;
  json_writer want_;
};

inline std::string cents(std::int64_t c) {
  std::string s;
  llmdlq_bench::detail::append_cents(s, c);
  return s;
}

inline std::string quantity(std::int64_t milli) {
  std::string s;
  llmdlq_bench::detail::append_quantity(s, milli);
  return s;
}

// Notes the model copies from the receipt: two lines each, some with a tab.
inline constexpr std::string_view item_notes[] = {
    "Actie: 2e halve prijs\nGeldig t/m zondag",
    "Скидка по карте\nдо 30.09",
    "Bonus\t-0,50\nop vertoon van bonuskaart",
    "දිනය: 2026-09-28\nවට්ටම් 10%",
};

// The footer (totals, notes, confidence) takes ~300 bytes.
constexpr std::size_t footer_reserve = 300;

/// The header of an invoice and its total, no line items: ~300 bytes, the
/// size of a small extraction. Every failure kind still has something to
/// break: keys and strings, nested and inline containers, booleans and a
/// null, strings with newlines, comments.
inline twin_writer make_invoice_header(style s) {
  twin_writer w(s);
  w.begin_object();
  w.comment("extracted from scan-100042");
  w.member("invoice_id", "INV-2026-004217");
  w.member("issued_at", "2026-09-28T17:42:05+02:00");
  w.key("merchant");
  w.begin_object();
  w.member("name", "Albert Heijn 1423");
  w.member("address", "Damrak 1\n1012 LG Amsterdam");
  w.member_bool("verified", true);
  w.end();
  w.key("tags");
  w.begin_array(true);
  w.string("food");
  w.string("NL");
  w.end();
  w.member_null("discount");
  w.member_number("total", "12.48");
  w.inline_comment("EUR");
  w.member("notes", "Bedankt voor uw bezoek!\nTot ziens.");
  w.member_bool("needs_review", false);
  w.end();
  return w;
}

/// An invoice of about `target` bytes as `s` spells it, beside the valid one.
inline twin_writer make_invoice(style s, std::size_t target) {
  if (target < 512) return make_invoice_header(s);
  llmdlq_bench::detail::rng r(0x1D0C5EEDull ^ target);
  twin_writer w(s);
  w.begin_object();
  w.comment("extracted from scan-100042 (page 1 of 1)");
  w.member("invoice_id", "INV-2026-004217");
  w.member("receipt_id", llmdlq_bench::detail::make_uuid_v7(r));
  w.member("issued_at", "2026-09-28T17:42:05+02:00");
  w.member("currency", "EUR");
  w.member("language", "nl");
  w.comment("merchant as printed at the top of the receipt");
  w.key("merchant");
  w.begin_object();
  w.member("name", "Albert Heijn 1423");
  w.member("address", "Damrak 1\n1012 LG Amsterdam");
  w.member("vat_id", "NL003028112B01");
  w.member("phone", "+31 20 555 0142");
  w.member_bool("verified", true);
  w.end();
  w.key("customer");
  w.begin_object();
  w.member("name", "Анна Петрова");
  w.member("email", "anna.petrova@example.org");
  w.member_null("loyalty_id");
  w.member_bool("member", false);
  w.end();
  w.key("payment");
  w.begin_object();
  w.member("method", "card");
  w.member("card_last4", "4821");
  w.member_bool("contactless", true);
  w.member_null("tip");
  w.end();

  w.comment("line items, in the order printed");
  w.key("items");
  w.begin_array();
  std::int64_t subtotal = 0, tax = 0, discounts = 0;
  for (std::size_t index = 0; index == 0 || w.size() + footer_reserve < target; ++index) {
    const std::size_t which = index == 0 ? 0 : r.below(std::size(llmdlq_bench::detail::products));
    const auto& p = llmdlq_bench::detail::products[which];
    const std::int64_t milli = p.sold_by_weight ? 150 + static_cast<std::int64_t>(r.below(1850))
                                                : 1000 * (1 + static_cast<std::int64_t>(r.below(3)));
    const std::int64_t gross = (milli * p.unit_price_cents + 500) / 1000;
    const bool discounted = index % 4 == 3;
    const std::int64_t discount = discounted ? (gross + 5) / 10 : 0;
    const std::int64_t amount = gross - discount;
    subtotal += amount;
    discounts += discount;
    tax += amount * p.vat_rate / (100 + p.vat_rate);

    std::string label = "line " + std::to_string(index + 1) + ": ";
    label += p.description;
    w.comment(label);
    w.begin_object();
    w.member_number("line", std::to_string(index + 1));
    if (p.sku.empty()) {
      w.member_null("sku");
    } else {
      w.member("sku", p.sku);
    }
    w.member("description", p.description);
    w.member_number("quantity", quantity(milli));
    w.member("unit", p.sold_by_weight ? "kg" : "pcs");
    w.member_number("unit_price", cents(p.unit_price_cents));
    if (p.sold_by_weight) w.inline_comment("per kg");
    if (discounted) {
      w.member_number("discount", cents(discount));
    } else {
      w.member_null("discount");
    }
    w.member_number("vat_rate", std::to_string(p.vat_rate));
    w.member_bool("taxable", p.vat_rate > 0);
    w.member_bool("returned", false);
    w.key("tags");
    w.begin_array(true);
    w.string(p.vat_rate == 21 ? "household" : "food");
    w.string(which < 8 ? "NL" : which < 16 ? "RU" : "LK");
    if (discounted) w.string("promo");
    w.end();
    w.key("modifiers");
    w.begin_array();
    if (index % 5 == 4) {
      w.begin_object();
      w.member("name", "Statiegeld");
      w.member_number("amount", "0.15");
      w.end();
    }
    w.end();
    if (index % 3 == 1) w.member("note", item_notes[(index / 3) % std::size(item_notes)]);
    w.member_number("amount", cents(amount));
    w.inline_comment("EUR");
    w.end();
  }
  w.end();

  w.comment("totals as printed; the model checked them against the lines");
  w.key("totals");
  w.begin_object();
  w.member_number("subtotal", cents(subtotal));
  w.member_number("tax", cents(tax));
  w.member_number("discounts", cents(discounts));
  w.member_null("rounding");
  w.member_number("total", cents(subtotal));
  w.end();
  w.member("notes", "Bedankt voor uw bezoek!\nRetourneren binnen 14 dagen met kassabon.");
  w.member_number("confidence", "0.93");
  w.member_bool("needs_review", false);
  w.end();
  return w;
}

/// Closes a prefix of valid JSON that ends inside a string value.
inline std::string close_inside_string(std::string_view prefix) {
  std::string open;
  bool in_string = false, escaped = false;
  for (const char c : prefix) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open += c;
    } else if (c == '}' || c == ']') {
      open.pop_back();
    }
  }
  std::string out(prefix);
  out += '"';
  for (auto it = open.rbegin(); it != open.rend(); ++it) out += *it == '{' ? '}' : ']';
  return out;
}

constexpr std::string_view prose_before =
    "Sure! Here is the data I extracted from the receipt image, as JSON:\n\n```json\n";
constexpr std::string_view prose_after =
    "\n```\n\nAll amounts are in EUR. The VAT id and the card digits were read from the bottom of the "
    "receipt; let me know if you want the line items grouped by VAT rate.\n";

}  // namespace detail

/// The response of `kind` at about `target` bytes, and the document it means.
inline generated make_input(failure_kind kind, std::size_t target) {
  using detail::style;
  switch (kind) {
    case failure_kind::markdown_fence_prose: {
      auto w = detail::make_invoice(style::valid, target - detail::prose_before.size() - detail::prose_after.size());
      std::string input(detail::prose_before);
      input += w.input().text();
      input += detail::prose_after;
      return {std::move(input), w.intended().take()};
    }
    case failure_kind::truncated: {
      // The model ran out of tokens ~90 % of the way, in the middle of a
      // string: the first string value that reaches past 90 % is cut in its
      // middle (on a character boundary, not after a backslash).
      auto w = detail::make_invoice(style::valid, target * 10 / 9);
      const std::string& full = w.input().text();
      const std::size_t at = full.size() * 9 / 10;
      std::size_t cut = full.size();
      for (const auto& [b, e] : w.input().value_strings()) {
        if (e <= at || e - b < 2) continue;
        cut = std::clamp(at, b + 1, e - 1);
        while (cut > b + 1 && ((static_cast<unsigned char>(full[cut]) & 0xC0) == 0x80 || full[cut - 1] == '\\')) --cut;
        break;
      }
      std::string input = full.substr(0, cut);
      std::string expected = detail::close_inside_string(input);
      return {std::move(input), std::move(expected)};
    }
    default: break;
  }
  const style s = kind == failure_kind::trailing_commas      ? style::trailing_commas
                  : kind == failure_kind::missing_commas     ? style::missing_commas
                  : kind == failure_kind::single_quotes      ? style::single_quotes
                  : kind == failure_kind::unquoted_keys      ? style::unquoted_keys
                  : kind == failure_kind::python_literals    ? style::python_literals
                  : kind == failure_kind::comments           ? style::comments
                  : kind == failure_kind::control_characters ? style::control_characters
                                                             : style::valid;
  auto w = detail::make_invoice(s, target);
  return {w.input().take(), w.intended().take()};
}

}  // namespace llmdlq_bench::repair
