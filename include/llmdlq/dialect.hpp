// SPDX-License-Identifier: MIT
// The JSON Schema drafts a schema can be written in, each with its own
// keywords and meanings, and their names.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A JSON Schema draft. A schema resource names its draft with `$schema`;
/// compile_options::default_dialect applies to those that do not.
enum class dialect : std::uint8_t {
  draft4,        ///< `id`, boolean exclusiveMinimum/Maximum, `$ref` overrides its siblings
  draft6,        ///< `$id`, boolean schemas, const, contains, propertyNames
  draft7,        ///< if/then/else
  draft2019_09,  ///< $anchor, $recursiveRef, unevaluated*, dependentRequired/Schemas, vocabularies
  draft2020_12,  ///< prefixItems, $dynamicRef
};

/// The draft's short name, as `--draft` takes it: "draft4" … "draft2019-09", "draft2020-12".
[[nodiscard]] constexpr std::string_view to_string(dialect d) noexcept {
  switch (d) {
    case dialect::draft4: return "draft4";
    case dialect::draft6: return "draft6";
    case dialect::draft7: return "draft7";
    case dialect::draft2019_09: return "draft2019-09";
    case dialect::draft2020_12: return "draft2020-12";
  }
  return "draft2020-12";
}

/// The draft's meta-schema URI, as `$schema` names it (without the empty fragment).
[[nodiscard]] constexpr std::string_view meta_schema_uri(dialect d) noexcept {
  switch (d) {
    case dialect::draft4: return "http://json-schema.org/draft-04/schema";
    case dialect::draft6: return "http://json-schema.org/draft-06/schema";
    case dialect::draft7: return "http://json-schema.org/draft-07/schema";
    case dialect::draft2019_09: return "https://json-schema.org/draft/2019-09/schema";
    case dialect::draft2020_12: return "https://json-schema.org/draft/2020-12/schema";
  }
  return "https://json-schema.org/draft/2020-12/schema";
}

/// The draft a short name ("draft7", "7", "2019-09", "draft2019-09" …) names.
[[nodiscard]] constexpr std::optional<dialect> dialect_named(std::string_view name) noexcept {
  if (name.starts_with("draft")) name.remove_prefix(5);
  if (name.starts_with("-")) name.remove_prefix(1);
  if (name == "4" || name == "04") return dialect::draft4;
  if (name == "6" || name == "06") return dialect::draft6;
  if (name == "7" || name == "07") return dialect::draft7;
  if (name == "2019-09") return dialect::draft2019_09;
  if (name == "2020-12") return dialect::draft2020_12;
  return std::nullopt;
}

/// The draft whose meta-schema `uri` is, given with or without its empty
/// fragment and with http or https; nothing for any other URI.
[[nodiscard]] constexpr std::optional<dialect> dialect_of_meta_schema(std::string_view uri) noexcept {
  if (uri.ends_with("#")) uri.remove_suffix(1);
  const auto rest = [&](std::string_view scheme_less) {
    return (uri.starts_with("http://") && uri.substr(7) == scheme_less) ||
           (uri.starts_with("https://") && uri.substr(8) == scheme_less);
  };
  if (rest("json-schema.org/draft-04/schema")) return dialect::draft4;
  if (rest("json-schema.org/draft-06/schema")) return dialect::draft6;
  if (rest("json-schema.org/draft-07/schema")) return dialect::draft7;
  if (rest("json-schema.org/draft/2019-09/schema")) return dialect::draft2019_09;
  if (rest("json-schema.org/draft/2020-12/schema")) return dialect::draft2020_12;
  return std::nullopt;
}

LLMDLQ_END_NAMESPACE
