// SPDX-License-Identifier: MIT
// Generates include/llmdlq/detail/format/idna_table.hpp from ICU's Unicode data:
// the RFC 5892 section 3 derived property, plus what RFC 5891/5892/5893 rules read.
//
//   apt-get install libicu-dev
//   g++ -std=c++23 -O2 scripts/tools/gen_idna_table.cpp -o /tmp/gen_idna_table -licuuc
//   /tmp/gen_idna_table > include/llmdlq/detail/format/idna_table.hpp
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>
#include <cstdio>
#include <vector>

static bool unstable(UChar32 c) {
  UErrorCode e = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCInstance(e);
  icu::UnicodeString s(c);
  icu::UnicodeString a = nfkc->normalize(s, e);
  a.foldCase(U_FOLD_CASE_DEFAULT);
  icu::UnicodeString b = nfkc->normalize(a, e);
  return b != s;
}

static int idna_class(UChar32 c) {  // 0 disallowed/unassigned, 1 pvalid, 2 contextj, 3 contexto
  switch (c) {
    case 0x00DF: case 0x03C2: case 0x06FD: case 0x06FE: case 0x0F0B: case 0x3007: return 1;
    case 0x00B7: case 0x0375: case 0x05F3: case 0x05F4: case 0x30FB: return 3;
    case 0x0640: case 0x07FA: case 0x302E: case 0x302F: case 0x303B: return 0;
    default: break;
  }
  if ((c >= 0x0660 && c <= 0x0669) || (c >= 0x06F0 && c <= 0x06F9)) return 3;
  if (c >= 0x3031 && c <= 0x3035) return 0;
  const int gc = u_charType(c);
  if (gc == U_UNASSIGNED && !u_hasBinaryProperty(c, UCHAR_NONCHARACTER_CODE_POINT)) return 0;
  if (c == 0x2D || (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A)) return 1;
  if (u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL)) return 2;
  if (gc == U_SURROGATE) return 0;
  if (unstable(c)) return 0;
  if (u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ||
      u_hasBinaryProperty(c, UCHAR_WHITE_SPACE) ||
      u_hasBinaryProperty(c, UCHAR_NONCHARACTER_CODE_POINT)) return 0;
  const int block = ublock_getCode(c);
  if (block == UBLOCK_COMBINING_MARKS_FOR_SYMBOLS || block == UBLOCK_MUSICAL_SYMBOLS ||
      block == UBLOCK_ANCIENT_GREEK_MUSICAL_NOTATION) return 0;
  const int hst = u_getIntPropertyValue(c, UCHAR_HANGUL_SYLLABLE_TYPE);
  if (hst == U_HST_LEADING_JAMO || hst == U_HST_VOWEL_JAMO || hst == U_HST_TRAILING_JAMO) return 0;
  switch (gc) {
    case U_LOWERCASE_LETTER: case U_UPPERCASE_LETTER: case U_OTHER_LETTER:
    case U_DECIMAL_DIGIT_NUMBER: case U_MODIFIER_LETTER: case U_NON_SPACING_MARK:
    case U_COMBINING_SPACING_MARK: return 1;
    default: return 0;
  }
}

static int bidi(UChar32 c) {
  switch (u_charDirection(c)) {
    case U_LEFT_TO_RIGHT: return 1;
    case U_RIGHT_TO_LEFT: return 2;
    case U_RIGHT_TO_LEFT_ARABIC: return 3;
    case U_EUROPEAN_NUMBER: return 4;
    case U_ARABIC_NUMBER: return 5;
    case U_EUROPEAN_NUMBER_SEPARATOR: return 6;
    case U_COMMON_NUMBER_SEPARATOR: return 7;
    case U_EUROPEAN_NUMBER_TERMINATOR: return 8;
    case U_OTHER_NEUTRAL: return 9;
    case U_BOUNDARY_NEUTRAL: return 10;
    case U_DIR_NON_SPACING_MARK: return 11;
    default: return 0;
  }
}

static int joining(UChar32 c) {
  switch (u_getIntPropertyValue(c, UCHAR_JOINING_TYPE)) {
    case U_JT_DUAL_JOINING: return 1;
    case U_JT_LEFT_JOINING: return 2;
    case U_JT_RIGHT_JOINING: return 3;
    case U_JT_TRANSPARENT: return 4;
    case U_JT_JOIN_CAUSING: return 5;
    default: return 0;
  }
}

static int script(UChar32 c) {
  UErrorCode e = U_ZERO_ERROR;
  switch (uscript_getScript(c, &e)) {
    case USCRIPT_GREEK: return 1;
    case USCRIPT_HEBREW: return 2;
    case USCRIPT_HIRAGANA: case USCRIPT_KATAKANA: case USCRIPT_HAN: return 3;
    default: return 0;
  }
}

int main() {
  std::vector<std::pair<unsigned, unsigned>> runs;
  for (UChar32 c = 0; c <= 0x10FFFF; ++c) {
    unsigned props = 0;
    if (const int cls = idna_class(c); cls != 0) {
      const int gc = u_charType(c);
      const bool mark = gc == U_NON_SPACING_MARK || gc == U_COMBINING_SPACING_MARK || gc == U_ENCLOSING_MARK;
      props = cls | bidi(c) << 2 | joining(c) << 6 | unsigned(mark) << 9 |
              unsigned(u_getCombiningClass(c) == 9) << 10 | script(c) << 11;
    }
    if (runs.empty() || runs.back().second != props) runs.emplace_back(c, props);
  }
  UVersionInfo v;
  u_getUnicodeVersion(v);
  std::printf("// SPDX-License-Identifier: MIT\n");
  std::printf("// IDNA2008 code point properties (Unicode %d.%d.%d), generated from ICU %s by\n// scripts/tools/gen_idna_table.cpp; do not edit.\n",
              v[0], v[1], v[2], U_ICU_VERSION);
  std::printf("#pragma once\n\n#include <cstdint>\n\nnamespace llmdlq::detail {\n\n");
  std::printf("// Runs of code points sharing one packed property set: idna_run_starts[i] is\n"
              "// the first code point of run i, idna_run_props[i] its properties:\n"
              "//   bits 0-1   derived property: 0 DISALLOWED or UNASSIGNED, 1 PVALID,\n"
              "//              2 CONTEXTJ, 3 CONTEXTO\n"
              "//   bits 2-5   Bidi_Class: 1 L, 2 R, 3 AL, 4 EN, 5 AN, 6 ES, 7 CS, 8 ET,\n"
              "//              9 ON, 10 BN, 11 NSM, 0 any other\n"
              "//   bits 6-8   Joining_Type: 1 D, 2 L, 3 R, 4 T, 5 C, 0 U\n"
              "//   bit  9     General_Category is a mark (Mn, Mc, Me)\n"
              "//   bit  10    Canonical_Combining_Class is Virama (9)\n"
              "//   bits 11-12 Script: 1 Greek, 2 Hebrew, 3 Hiragana, Katakana or Han, 0 other\n"
              "// The derived property follows RFC 5892 section 3 (Exceptions, Unassigned,\n"
              "// LDH, JoinControl, Unstable, IgnorableProperties, IgnorableBlocks,\n"
              "// OldHangulJamo, LetterDigits); every other field is zero for code points\n"
              "// that are not PVALID, CONTEXTJ or CONTEXTO.\n");
  std::printf("inline constexpr std::uint32_t idna_run_starts[%zu] = {", runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    std::printf("%s0x%X,", i % 10 ? " " : "\n    ", runs[i].first);
  std::printf("\n};\n\ninline constexpr std::uint16_t idna_run_props[%zu] = {", runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    std::printf("%s0x%X,", i % 12 ? " " : "\n    ", runs[i].second);
  std::printf("\n};\n\n}  // namespace llmdlq::detail\n");
  std::fprintf(stderr, "%zu runs\n", runs.size());
}
