// SPDX-License-Identifier: MIT
// The redactor: replaces personal data and secrets in the texts an envelope
// carries, before any sink or repair prompt sees them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/pii_path.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct envelope;
struct redaction_summary;

/// What the detectors look for.
enum class pii_kind : std::uint8_t {
  email,         ///< an address with a domain of two labels or more (internationalised too)
  phone,         ///< `+` and 8-15 digits, `00` and 10-17, `0` and 9-11, or a domestic format of `phone_regions`
  iban,          ///< ISO 13616 in either case, mod-97 checked
  card,          ///< 13-19 digits starting 2-6, Luhn checked
  ipv4,          ///< dotted quad, each part 0-255
  ipv6,          ///< checked by inet_pton
  api_key,       ///< OpenAI, Anthropic, GitHub, GitLab, Slack, Stripe (live, test, webhook), AWS and Google keys; JWTs
  bearer_token,  ///< the credential after `Bearer `
  national_id,   ///< a national_id_rule's shape and checksum
  private_key,   ///< a PEM private key block, or what a cut-off reply kept of one
  password,      ///< the password in a URL: `postgres://user:PASSWORD@host`
};
inline constexpr std::size_t pii_kind_count = 11;

/// The kind's name as envelopes and placeholders spell it: `iban`, `api_key`.
[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(pii_kind k) noexcept;

/// A set of pii_kind.
class pii_kinds {
 public:
  constexpr pii_kinds() noexcept = default;
  constexpr pii_kinds(std::initializer_list<pii_kind> kinds) noexcept {
    for (const pii_kind k : kinds) bits_ |= bit(k);
  }
  /// Every kind.
  [[nodiscard]] static constexpr pii_kinds all() noexcept {
    pii_kinds k;
    k.bits_ = (1u << pii_kind_count) - 1;
    return k;
  }
  [[nodiscard]] constexpr bool contains(pii_kind k) const noexcept { return (bits_ & bit(k)) != 0; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  constexpr pii_kinds& remove(pii_kind k) noexcept {
    bits_ &= ~bit(k);
    return *this;
  }

 private:
  static constexpr std::uint32_t bit(pii_kind k) noexcept { return 1u << static_cast<unsigned>(k); }
  std::uint32_t bits_ = 0;
};

/// A national id: one or more shapes and a checksum. A shape is matched
/// character by character: `#` a digit, `A` an uppercase letter, `[VX]` one
/// of the listed characters, anything else itself. The id must stand alone
/// (no letter or digit right before or after it).
struct national_id_rule {
  std::string name;                 ///< what it is reported as: `nl_bsn`
  std::vector<std::string> shapes;  ///< `#########`
  std::function<bool(std::string_view id)> checksum;  ///< the matched text; empty: the shape alone decides
};

/// Rules for the national ids of the seed documents' countries.
namespace national_ids {
/// Netherlands: burgerservicenummer, 9 digits (`123456782`, or as documents
/// print it: `1234.56.782`, `1234 56 782`), the eleven test.
[[nodiscard]] LLMDLQ_INLINE national_id_rule nl_bsn();
/// Russia: INN, 10 digits (organisations) or 12 (people), with their check digits.
[[nodiscard]] LLMDLQ_INLINE national_id_rule ru_inn();
/// Russia: SNILS, `###-###-### ##` or 11 digits, with its check number.
[[nodiscard]] LLMDLQ_INLINE national_id_rule ru_snils();
/// Sri Lanka: NIC, 9 digits and V or X, or 12 digits, with a valid day of the year.
[[nodiscard]] LLMDLQ_INLINE national_id_rule lk_nic();
}  // namespace national_ids

/// What becomes of a detected value.
enum class redaction_action : std::uint8_t {
  remove,  ///< `<iban>`: the kind only
  mask,    ///< `**************4300`: the last characters kept (redaction_options::mask_keep)
  token,   ///< `<iban:k3jq7vd2m4w5x6ya>`: a keyed HMAC-SHA-256 of the value, equal for equal values
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(redaction_action a) noexcept;

/// The secret that makes tokens: without it, a token cannot be matched
/// against a dictionary of candidate values.
struct redaction_key {
  std::string id;      ///< reported with each token (`key_id`); rotate by changing both
  std::string secret;  ///< at least 32 bytes, from a secrets store
};

/// How a redactor is built.
struct redaction_options {
  pii_kinds detect = pii_kinds::all();
  std::vector<national_id_rule> national_ids;  ///< national_id is detected only with rules here
  /// Regions whose domestic phone formats are read as well, by ISO 3166 code:
  /// `US` and `CA` (`(415) 555-2671`), `RU` and `KZ` (`8 (916) 123-45-67`),
  /// `IN` (`98765 43210`), `CN` (`138 0013 8000`). Numbers written with `+`,
  /// `00` or a trunk `0` (`07700 900123`, `06-12345678`) are read in every region.
  std::vector<std::string> phone_regions;
  /// JSON Pointers into the response document whose values are always
  /// redacted (`*` for any member or item): `/customer/iban`, `/lines/*/card`.
  std::vector<std::string> pointers;
  /// Also the properties the response schema marks with `"x-llmdlq-pii": true`
  /// (or a label: `"x-llmdlq-pii": "iban"`).
  bool schema_annotations = true;
  /// The action for every kind without its own in `actions`: `token` when a
  /// key is set, else `remove`.
  std::optional<redaction_action> action;
  /// By kind name (`iban`, a national id's name, a schema label, `pii` for pointers).
  std::map<std::string, redaction_action, std::less<>> actions;
  std::size_t mask_keep = 4;  ///< characters a mask keeps, at most 6 (more could be detected again)
  std::optional<redaction_key> key;
};

/// Why redaction_options cannot be used.
struct redaction_error {
  std::string option;  ///< the member at fault: `key`
  std::string message;
};

/// Replaces detected values in texts and envelopes. Immutable, thread-safe
/// and cheap to copy (copies share the compiled options).
///
/// Detection is one forward pass per text, linear in its length, over the
/// text as written and as meant: JSON escapes at any depth (`\n`, `\u0040`,
/// the `\\n` of JSON quoted in JSON), JSON Pointer escapes, percent-encoding,
/// HTML character references, full-width forms and Unicode spaces and dashes
/// are decoded first, and each finding is replaced at its exact bytes in the
/// original (a JSON text stays JSON). Each value is validated (mod-97, Luhn,
/// inet_pton, checksums), so a number that only looks like a card stays.
/// Values the schema or `pointers` name are found by their place in the
/// JSON, also in a response that is not valid JSON (truncated, fenced,
/// wrapped in prose), by a lexical walk that follows keys and array positions.
///
/// Limits: a value split across fields or spelled out in words is not
/// recognised; names, addresses and other free text are found only where the
/// schema marks them.
class redactor {
 public:
  /// Checks and compiles `options`: the key's secret is at least 32 bytes
  /// and its id is set, mask_keep is at most 6, national id rules have a
  /// name and a shape, pointers are JSON Pointers, phone regions are known.
  [[nodiscard]] static LLMDLQ_INLINE expected<redactor, redaction_error> create(redaction_options options);
  /// Every detector, `remove` for each kind, no pointers (what process_options holds by default).
  [[nodiscard]] static LLMDLQ_INLINE const redactor& standard();
  /// A redactor that changes nothing (a DLQ whose readers may see everything).
  [[nodiscard]] static LLMDLQ_INLINE const redactor& none();

  /// `text` with every detected value replaced; `report` (when given) gains
  /// a summary per kind and action for `field`.
  [[nodiscard]] LLMDLQ_INLINE std::string redact_text(std::string_view text, std::string_view field = "text",
                                                      std::vector<redaction_summary>* report = nullptr) const;

  /// The same for a JSON document's text (valid or not): values at
  /// `pointers` (and at `schema_paths`, when annotations are on) first, then
  /// the detectors over the rest.
  [[nodiscard]] LLMDLQ_INLINE std::string redact_document(std::string_view text,
                                                          std::span<const pii_path> schema_paths = {},
                                                          std::string_view field = "raw_response",
                                                          std::vector<redaction_summary>* report = nullptr) const;

  /// Redacts an envelope in place: the raw response (as a document), the
  /// original input, the failure's messages and paths, and the string values
  /// of the extensions; each redaction is added to `e.redactions`. Lengths
  /// and hashes keep describing the original texts. Applying it twice
  /// changes nothing more.
  LLMDLQ_INLINE void redact(envelope& e, std::span<const pii_path> schema_paths = {}) const;

  /// Whether this redactor can change anything.
  [[nodiscard]] LLMDLQ_INLINE bool active() const noexcept;

  struct state;

 private:
  explicit redactor(std::shared_ptr<const state> s) noexcept : state_(std::move(s)) {}
  std::shared_ptr<const state> state_;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/redaction.ipp"
#endif
