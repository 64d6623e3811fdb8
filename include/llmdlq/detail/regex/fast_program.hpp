// SPDX-License-Identifier: MIT
// A backtracking-free matcher for the patterns most schemas hold: sequences of quantified literals and classes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/regex/code_point_set.hpp"
#include "llmdlq/detail/regex/parser.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Bytes as a 256-bit table.
struct byte_set {
  std::uint64_t bits[4] = {0, 0, 0, 0};

  void add(unsigned byte) noexcept { bits[byte >> 6] |= std::uint64_t{1} << (byte & 63); }
  bool contains(unsigned char byte) const noexcept { return (bits[byte >> 6] >> (byte & 63)) & 1; }
};

/// One step of a fast_program.
struct fast_step {
  enum class kind : std::uint8_t {
    run,     ///< fixed positions, one ASCII code point each: positions[first, first + count)
    repeat,  ///< a class taken min..max times; its non-ASCII part is wide[first, first + count)
    choice,  ///< one of choices[first, first + count), literal strings none of which prefixes another
  };
  kind op = kind::run;
  std::uint32_t min = 1;
  std::uint32_t max = 1;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  /// repeat: the ASCII members, plus every UTF-8 lead byte when the class
  /// holds code points above ASCII (those are then decoded and looked up).
  byte_set bytes;
};

/// A pattern that greedy left-to-right matching decides exactly, without
/// backtracking. make_fast_program() proves that for each variable-length
/// atom, no code point it takes can begin what follows it: then in any match
/// the atom must have taken as many code points as it could, so the first
/// greedy attempt at a start position is the only one worth making.
struct fast_program {
  bool anchored_start = false;
  bool anchored_end = false;
  std::size_t min_bytes = 0;  ///< no match is shorter
  std::size_t max_bytes = 0;  ///< no match is longer
  /// `^[class]{min,max}$` over an ASCII class, the commonest shape of all:
  /// a match is a length in [min_bytes, max_bytes] with every byte in the class.
  bool whole_ascii_class = false;
  std::vector<fast_step> steps;
  std::vector<byte_set> positions;
  code_point_ranges wide;
  std::vector<std::string> choices;
};

inline constexpr std::size_t fast_max_atoms = 256;
/// Fixed ASCII positions checked as one run (32 bytes of table each).
inline constexpr std::uint32_t fast_max_run = 256;
inline constexpr std::size_t fast_max_choices = 64;
/// Unanchored patterns are tried at each start, so they must be short.
inline constexpr std::uint64_t fast_unanchored_max_length = 64;

/// One atom of a pattern the scanner can decide: a class (or literal) or a
/// group of literal choices, repeated min to max times.
struct fast_atom {
  code_point_ranges ranges;  // what a class atom takes, or the first code points of the choices
  std::vector<std::string> choices;
  std::uint32_t min = 1;
  std::uint32_t max = 1;
  std::uint64_t longest = 1;  // code points in the longest choice
};

/// The group of literal alternatives from tokens[open] to tokens[close], or
/// nothing when a choice is empty, not literal, or a prefix of another (the
/// scanner takes the first choice that matches, without backtracking).
inline std::optional<fast_atom> choice_atom(const std::vector<regex_token>& tokens, std::size_t open, std::size_t close) {
  fast_atom atom;
  atom.choices.emplace_back();
  std::uint64_t length = 0;
  atom.longest = 0;
  for (std::size_t j = open + 1; j < close; ++j) {
    if (tokens[j].kind == token_kind::alternative) {
      atom.choices.emplace_back();
      length = 0;
    } else if (tokens[j].kind == token_kind::literal && !(tokens[j].value >= 0xD800 && tokens[j].value <= 0xDFFF)) {
      append_utf8(atom.choices.back(), tokens[j].value);
      atom.longest = std::max(atom.longest, ++length);
    } else {
      return std::nullopt;
    }
  }
  if (atom.choices.size() > fast_max_choices) return std::nullopt;
  for (const auto& a : atom.choices) {
    if (a.empty()) return std::nullopt;
    for (const auto& b : atom.choices) {
      if (&a != &b && b.starts_with(a)) return std::nullopt;
    }
    const char32_t first = decode_utf8(a).value_or(0);
    atom.ranges.push_back({first, first});
  }
  normalize(atom.ranges);
  return atom;
}

/// The atoms of tokens[begin, end), or nothing when one is of a shape the
/// scanner does not decide (properties, lookarounds, quantified groups...).
inline std::optional<std::vector<fast_atom>> read_fast_atoms(const parsed_pattern& pattern, std::size_t begin,
                                                             std::size_t end) {
  const auto& tokens = pattern.tokens;
  std::vector<fast_atom> atoms;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& token = tokens[i];
    if (token.kind == token_kind::literal) {
      fast_atom atom;
      atom.ranges = {{token.value, token.value}};
      normalize(atom.ranges);
      atoms.push_back(std::move(atom));
    } else if (token.kind == token_kind::char_class) {
      const auto& cls = pattern.classes[token.value];
      if (!cls.properties.empty()) return std::nullopt;
      fast_atom atom;
      atom.ranges = cls.negated ? complement(cls.ranges) : cls.ranges;
      atoms.push_back(std::move(atom));
    } else if (token.kind == token_kind::quantifier) {
      const auto previous = tokens[i - 1].kind;
      if (previous != token_kind::literal && previous != token_kind::char_class) return std::nullopt;
      atoms.back().min = token.value;
      atoms.back().max = token.max;
    } else if (token.kind == token_kind::group_open) {
      if (token.group != group_kind::capture && token.group != group_kind::plain) return std::nullopt;
      const std::size_t close = token.value;
      if (close + 1 < tokens.size() && tokens[close + 1].kind == token_kind::quantifier) return std::nullopt;
      if (!token.has_alternative) continue;  // a plain sequence: its atoms join the outer one
      auto atom = choice_atom(tokens, i, close);
      if (!atom) return std::nullopt;
      atoms.push_back(std::move(*atom));
      i = close;
    } else if (token.kind != token_kind::group_close) {
      return std::nullopt;
    }
    if (atoms.size() > fast_max_atoms) return std::nullopt;
  }
  return atoms;
}

/// Whether scanning greedily without backtracking decides the atoms exactly:
/// what a variable repeat takes never overlaps what may follow it, and an
/// unanchored pattern is short enough to try at every start.
inline bool scans_exactly(const std::vector<fast_atom>& atoms, bool anchored_start) {
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (atoms[i].min == atoms[i].max) continue;
    code_point_ranges follow;
    for (std::size_t j = i + 1; j < atoms.size(); ++j) {
      follow.insert(follow.end(), atoms[j].ranges.begin(), atoms[j].ranges.end());
      if (atoms[j].min > 0) break;
    }
    normalize(follow);
    if (intersects(atoms[i].ranges, follow)) return false;
  }
  if (anchored_start) return true;
  std::uint64_t length = 0;
  for (const auto& atom : atoms) {
    if (atom.max == unbounded) return false;
    length += atom.max * atom.longest;
  }
  return length <= fast_unanchored_max_length;
}

inline constexpr std::size_t fast_unlimited_bytes = SIZE_MAX;

inline std::size_t add_saturating(std::size_t a, std::uint64_t b) noexcept {
  return b >= fast_unlimited_bytes - a ? fast_unlimited_bytes : a + static_cast<std::size_t>(b);
}

/// A fixed run of ASCII positions joins the run before it while it fits.
inline void emit_run(fast_program& program, const fast_atom& atom) {
  if (program.steps.empty() || program.steps.back().op != fast_step::kind::run ||
      program.steps.back().count + atom.min > fast_max_run) {
    fast_step run;
    run.op = fast_step::kind::run;
    run.first = static_cast<std::uint32_t>(program.positions.size());
    program.steps.push_back(run);
  }
  byte_set bytes;
  for (const auto r : atom.ranges) {
    for (char32_t cp = r.first; cp <= r.last; ++cp) bytes.add(cp);
  }
  program.positions.insert(program.positions.end(), atom.min, bytes);
  program.steps.back().count += atom.min;
  program.min_bytes += atom.min;
  program.max_bytes = add_saturating(program.max_bytes, atom.min);
}

inline void emit_choice(fast_program& program, fast_atom& atom, fast_step& step) {
  step.op = fast_step::kind::choice;
  step.first = static_cast<std::uint32_t>(program.choices.size());
  step.count = static_cast<std::uint32_t>(atom.choices.size());
  std::size_t shortest = fast_unlimited_bytes;
  std::size_t longest = 0;
  for (auto& choice : atom.choices) {
    shortest = std::min(shortest, choice.size());
    longest = std::max(longest, choice.size());
    program.choices.push_back(std::move(choice));
  }
  program.min_bytes += shortest;
  program.max_bytes = add_saturating(program.max_bytes, longest);
}

/// A repeated class: ASCII in the step's byte set, the rest as wide ranges
/// entered by any UTF-8 lead byte.
inline void emit_repeat(fast_program& program, const fast_atom& atom, fast_step& step) {
  step.op = fast_step::kind::repeat;
  step.first = static_cast<std::uint32_t>(program.wide.size());
  for (const auto r : atom.ranges) {
    for (char32_t cp = r.first; cp <= std::min<char32_t>(r.last, 0x7F); ++cp) step.bytes.add(cp);
    if (r.last >= 0x80) program.wide.push_back({std::max<char32_t>(r.first, 0x80), r.last});
  }
  step.count = static_cast<std::uint32_t>(program.wide.size()) - step.first;
  if (step.count > 0) {
    for (unsigned lead = 0xC2; lead <= 0xF4; ++lead) step.bytes.add(lead);
  }
  program.min_bytes += atom.min;
  program.max_bytes = atom.max == unbounded
                          ? fast_unlimited_bytes
                          : add_saturating(program.max_bytes, std::uint64_t{atom.max} * (step.count > 0 ? 4 : 1));
}

/// The fast program for `pattern`, or nothing when its shape is not one the
/// scanner decides exactly (PCRE2 then runs it).
inline std::optional<fast_program> make_fast_program(const parsed_pattern& pattern) {
  const auto& tokens = pattern.tokens;
  fast_program program;
  std::size_t begin = 0;
  std::size_t end = tokens.size();
  if (begin < end && tokens[begin].kind == token_kind::line_start) {
    program.anchored_start = true;
    ++begin;
  }
  if (end > begin && tokens[end - 1].kind == token_kind::line_end) {
    program.anchored_end = true;
    --end;
  }
  auto atoms = read_fast_atoms(pattern, begin, end);
  if (!atoms || !scans_exactly(*atoms, program.anchored_start)) return std::nullopt;
  for (auto& atom : *atoms) {
    const bool ascii_only = atom.ranges.empty() || atom.ranges.back().last < 0x80;
    if (atom.choices.empty() && atom.min == atom.max && ascii_only && atom.min <= fast_max_run) {
      emit_run(program, atom);
      continue;
    }
    fast_step step;
    step.min = atom.min;
    step.max = atom.max;
    if (!atom.choices.empty()) {
      emit_choice(program, atom, step);
    } else {
      emit_repeat(program, atom, step);
    }
    program.steps.push_back(step);
  }
  program.whole_ascii_class = program.anchored_start && program.anchored_end && program.steps.size() == 1 &&
                              program.steps[0].op == fast_step::kind::repeat && program.steps[0].count == 0;
  return program;
}

/// Decodes the sequence of `length` bytes at `p`, which is valid UTF-8.
inline char32_t decode_valid_utf8(const unsigned char* p, std::size_t length) noexcept {
  switch (length) {
    case 2: return static_cast<char32_t>(((p[0] & 0x1F) << 6) | (p[1] & 0x3F));
    case 3: return static_cast<char32_t>(((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F));
    default:
      return static_cast<char32_t>(((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) |
                                   (p[3] & 0x3F));
  }
}

inline bool in_ranges(const code_point_range* first, const code_point_range* last, char32_t cp) noexcept {
  for (; first != last; ++first) {
    if (cp < first->first) return false;
    if (cp <= first->last) return true;
  }
  return false;
}

/// Whether `program` matches `subject` (valid UTF-8) starting at byte `pos`.
inline bool fast_match_at(const fast_program& program, std::string_view subject, std::size_t pos) noexcept {
  const auto* data = reinterpret_cast<const unsigned char*>(subject.data());
  const std::size_t size = subject.size();
  for (const auto& step : program.steps) {
    switch (step.op) {
      case fast_step::kind::run: {
        if (size - pos < step.count) return false;
        const byte_set* positions = program.positions.data() + step.first;
        for (std::uint32_t i = 0; i < step.count; ++i) {
          if (!positions[i].contains(data[pos + i])) return false;
        }
        pos += step.count;
        break;
      }
      case fast_step::kind::repeat: {
        if (step.count == 0) {  // ASCII only: one byte per code point
          const std::size_t limit = pos + std::min<std::size_t>(step.max, size - pos);
          const std::size_t start = pos;
          while (pos < limit && step.bytes.contains(data[pos])) ++pos;
          if (pos - start < step.min) return false;
          break;
        }
        const code_point_range* wide = program.wide.data() + step.first;
        std::uint32_t count = 0;
        while (count < step.max && pos < size) {
          const unsigned char byte = data[pos];
          if (!step.bytes.contains(byte)) break;
          if (byte < 0x80) {
            ++pos;
          } else {
            const std::size_t length = utf8_sequence_length(byte);
            if (!in_ranges(wide, wide + step.count, decode_valid_utf8(data + pos, length))) break;
            pos += length;
          }
          ++count;
        }
        if (count < step.min) return false;
        break;
      }
      case fast_step::kind::choice: {
        const auto rest = subject.substr(pos);
        const auto first = program.choices.begin() + step.first;
        const auto chosen = std::find_if(first, first + step.count,
                                         [&](const std::string& choice) { return rest.starts_with(choice); });
        if (chosen == first + step.count) return false;
        pos += chosen->size();
        break;
      }
    }
  }
  return !program.anchored_end || pos == size;
}

/// ECMA-262 `test()` semantics: a match starting anywhere (or at 0 when anchored).
inline bool fast_search(const fast_program& program, std::string_view subject) noexcept {
  if (subject.size() < program.min_bytes) return false;
  if (program.anchored_start) {
    if (program.anchored_end && subject.size() > program.max_bytes) return false;
    if (program.whole_ascii_class) {
      const byte_set& bytes = program.steps[0].bytes;
      return std::all_of(subject.begin(), subject.end(),
                         [&bytes](char c) { return bytes.contains(static_cast<unsigned char>(c)); });
    }
    return fast_match_at(program, subject, 0);
  }
  std::size_t pos = 0;
  while (true) {
    if (fast_match_at(program, subject, pos)) return true;
    if (subject.size() - pos <= program.min_bytes) return false;  // what is left is too short
    pos += utf8_sequence_length(static_cast<unsigned char>(subject[pos]));
  }
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
