// SPDX-License-Identifier: MIT
// Catalogue-shaped validation cases: real-world kinds of schema, each with
// hundreds to thousands of generated instances, most valid and some not.
//
// The shapes follow what public schema catalogues hold and what end-to-end
// validator benchmarks run on them (one schema, many instance files): a
// package manifest, a CI workflow, a compiler configuration with long enums,
// a UI card schema with hundreds of element definitions and small cards, a
// YAML linter's configuration, a role's metadata with per-platform version
// lists, an OpenAPI-like description with recursive schema objects, GeoJSON,
// and the receipts of examples/data. Every schema and instance here is
// written or generated for this file; none is copied from a catalogue.
//
// Generation is deterministic (a seeded splitmix64), so the same build always
// times the same bytes. Instance `i` of a case is invalid exactly when
// `i % invalid_every == invalid_every - 1`, and then carries one mutation
// that breaks the schema structurally: `format` is never what makes an
// instance invalid, so validators that treat it as an annotation (the JSON
// Schema default) agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "documents.hpp"

namespace llmdlq_bench::catalog {

/// One generated instance and the verdict the generator built it for.
struct instance {
  std::string text;
  bool valid;
};

/// A schema and its instances.
struct catalog_case {
  std::string name;     ///< `package_manifest`, … (a file-name-safe word)
  std::string dialect;  ///< "draft-07" or "2020-12", as the schema's `$schema` says
  std::string shape;    ///< what the schema is shaped like
  std::string schema;   ///< JSON text
  std::vector<instance> instances;
  std::size_t expected_valid = 0;  ///< what the generator claims, checked by the benchmark and a test
  std::size_t expected_invalid = 0;

  [[nodiscard]] std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& i : instances) n += i.text.size();
    return n;
  }
};

namespace detail {

using boost::json::array;
using boost::json::object;
using boost::json::value;
using llmdlq_bench::detail::rng;

inline bool chance(rng& r, unsigned percent) { return r.below(100) < percent; }

template <class T>
const T& pick(rng& r, std::initializer_list<T> xs) {
  return xs.begin()[r.below(xs.size())];
}
template <class T>
const T& pick(rng& r, const std::vector<T>& xs) {
  return xs[r.below(xs.size())];
}

inline constexpr std::string_view words[] = {
    "alpha",   "bravo",  "cedar",  "delta",  "ember",  "fjord",  "grove",  "harbor", "indigo",  "juniper",
    "kestrel", "lumen",  "maple",  "nectar", "onyx",   "pixel",  "quartz", "river",  "saffron", "tundra",
    "umber",   "violet", "willow", "xenon",  "yarrow", "zephyr", "copper", "meadow", "signal",  "vector"};

inline std::string word(rng& r) { return std::string(words[r.below(std::size(words))]); }

/// `n` words joined by `sep`.
inline std::string words_of(rng& r, std::size_t n, std::string_view sep = " ") {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += sep;
    s += word(r);
  }
  return s;
}

inline std::string sentence(rng& r) {
  std::string s = words_of(r, 3 + r.below(9));
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s + ".";
}

inline std::string semver(rng& r) {
  std::string v = std::to_string(r.below(12)) + "." + std::to_string(r.below(30)) + "." + std::to_string(r.below(40));
  if (chance(r, 10)) v += "-beta." + std::to_string(r.below(5));
  return v;
}

/// Builds a case: `make(r, i, invalid)` returns instance `i`'s JSON value.
template <class Make>
catalog_case generate(std::string name, std::string dialect, std::string shape, std::string schema, std::size_t count,
                      std::size_t invalid_every, std::uint64_t seed, Make make) {
  catalog_case c{std::move(name), std::move(dialect), std::move(shape), std::move(schema), {}, 0, 0};
  rng r(seed);
  c.instances.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const bool invalid = i % invalid_every == invalid_every - 1;
    c.instances.push_back({boost::json::serialize(make(r, i, invalid)), !invalid});
  }
  c.expected_invalid = count / invalid_every;
  c.expected_valid = count - c.expected_invalid;
  return c;
}

/// Compact JSON text of a schema written as a literal (checked by parsing it).
inline std::string compact(std::string_view text) { return boost::json::serialize(boost::json::parse(text)); }

// ---------------------------------------------------------------------------
// package_manifest (draft-07): a package manifest, `$ref`s to definitions,
// oneOf between a string and an object form, propertyNames.

// clang-format off
inline constexpr std::string_view package_manifest_schema = R"json({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://example.com/schemas/package-manifest.json",
  "title": "Package manifest",
  "type": "object",
  "required": ["name", "version"],
  "definitions": {
    "person": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "object", "required": ["name"], "additionalProperties": false,
         "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"},
                        "url": {"type": "string", "format": "uri"}}}
      ]
    },
    "dependency_map": {
      "type": "object",
      "propertyNames": {"maxLength": 214, "pattern": "^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$"},
      "additionalProperties": {"type": "string"}
    },
    "script_map": {"type": "object", "additionalProperties": {"type": "string"}},
    "repository": {
      "oneOf": [
        {"type": "string"},
        {"type": "object", "required": ["type", "url"], "additionalProperties": false,
         "properties": {"type": {"type": "string"}, "url": {"type": "string"}, "directory": {"type": "string"}}}
      ]
    }
  },
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 214,
             "pattern": "^(@[a-z0-9*~-][a-z0-9*._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$"},
    "version": {"type": "string",
                "pattern": "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$"},
    "description": {"type": "string"},
    "keywords": {"type": "array", "items": {"type": "string"}},
    "homepage": {"type": "string", "format": "uri"},
    "license": {
      "anyOf": [
        {"enum": ["MIT", "ISC", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "GPL-3.0-only",
                  "LGPL-2.1-or-later", "MPL-2.0", "UNLICENSED"]},
        {"type": "string", "pattern": "^(SEE LICENSE IN |LicenseRef-)"}
      ]
    },
    "author": {"$ref": "#/definitions/person"},
    "contributors": {"type": "array", "items": {"$ref": "#/definitions/person"}},
    "files": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
    "main": {"type": "string"},
    "bin": {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/script_map"}]},
    "type": {"enum": ["commonjs", "module"]},
    "scripts": {"$ref": "#/definitions/script_map"},
    "repository": {"$ref": "#/definitions/repository"},
    "dependencies": {"$ref": "#/definitions/dependency_map"},
    "devDependencies": {"$ref": "#/definitions/dependency_map"},
    "peerDependencies": {"$ref": "#/definitions/dependency_map"},
    "engines": {"type": "object", "additionalProperties": {"type": "string"}},
    "private": {"type": "boolean"},
    "workspaces": {"type": "array", "items": {"type": "string"}},
    "publishConfig": {"type": "object", "properties": {"access": {"enum": ["public", "restricted"]},
                                                       "registry": {"type": "string", "format": "uri"}}}
  }
})json";
// clang-format on

inline value person(rng& r) {
  if (chance(r, 40)) return value(word(r) + " " + word(r) + " <" + word(r) + "@example.com>");
  object p{{"name", word(r) + " " + word(r)}};
  if (chance(r, 60)) p["email"] = word(r) + "@example.org";
  if (chance(r, 30)) p["url"] = "https://" + word(r) + ".example.net";
  return p;
}

inline std::string package_name(rng& r) {
  std::string name = chance(r, 30) ? "@" + word(r) + "/" : "";
  return name + words_of(r, 1 + r.below(3), "-");
}

inline object dependency_map(rng& r, std::size_t n) {
  object deps;
  for (std::size_t i = 0; i < n; ++i) {
    std::string range = "^";  // appended, not `"^" + …`, which GCC 12 warns about wrongly (-Wrestrict)
    range += semver(r);
    deps[package_name(r)] = range;
  }
  return deps;
}

inline value package_manifest_instance(rng& r, std::size_t, bool invalid) {
  object m{{"name", package_name(r)}, {"version", semver(r)}, {"description", sentence(r)}};
  array keywords;
  for (std::size_t i = 0, n = r.below(6); i < n; ++i) keywords.push_back(value(word(r)));
  m["keywords"] = std::move(keywords);
  m["license"] = chance(r, 90) ? value(pick(r, {"MIT", "ISC", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"}))
                               : value("SEE LICENSE IN LICENSE.txt");
  m["author"] = person(r);
  if (chance(r, 40)) {
    array contributors;
    for (std::size_t i = 0, n = 1 + r.below(4); i < n; ++i) contributors.push_back(person(r));
    m["contributors"] = std::move(contributors);
  }
  m["homepage"] = "https://" + word(r) + ".example.com";
  m["main"] = pick(r, {"index.js", "dist/index.js", "lib/main.js"});
  m["type"] = pick(r, {"commonjs", "module"});
  array files;
  for (std::size_t i = 0, n = 1 + r.below(4); i < n; ++i) files.push_back(value(word(r) + std::to_string(i) + "/"));
  m["files"] = std::move(files);
  m["scripts"] = object{{"build", "tsc -p ."}, {"test", "node --test"}, {"lint", "eslint " + word(r)}};
  if (chance(r, 30)) {
    m["bin"] = chance(r, 50) ? value("bin/" + word(r) + ".js") : value(object{{word(r), "bin/cli.js"}});
  }
  m["repository"] = chance(r, 50) ? value("github:" + word(r) + "/" + word(r))
                                  : value(object{{"type", "git"}, {"url", "https://example.com/" + word(r) + ".git"}});
  m["dependencies"] = dependency_map(r, r.below(12));
  m["devDependencies"] = dependency_map(r, r.below(8));
  if (chance(r, 20)) m["peerDependencies"] = dependency_map(r, 1 + r.below(2));
  m["engines"] = object{{"node", ">=" + std::to_string(14 + r.below(8))}};
  if (chance(r, 30)) m["private"] = chance(r, 50);
  if (chance(r, 20)) m["publishConfig"] = object{{"access", "public"}};
  if (invalid) {
    switch (r.below(7)) {
      case 0: m.erase("version"); break;                                                                // required
      case 1: m["name"] = "My Package " + word(r); break;                                               // pattern
      case 2: m["version"] = std::to_string(1 + r.below(9)) + "." + std::to_string(r.below(9)); break;  // pattern
      case 3: m["private"] = "yes"; break;                                                              // type
      case 4: m["type"] = "esm"; break;                                                                 // enum
      case 5: m["author"] = object{{"name", word(r)}, {"twitter", "@" + word(r)}}; break;  // oneOf: no branch
      default: m["dependencies"].as_object()[word(r)] = 1 + r.below(9); break;             // additionalProperties
    }
  }
  return m;
}

// ---------------------------------------------------------------------------
// ci_workflow (draft-07): a CI workflow: jobs by patternProperties, steps that
// are oneOf `uses` or `run`, string-or-array unions, `$ref`s to definitions.

// clang-format off
inline constexpr std::string_view ci_workflow_schema = R"json({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://example.com/schemas/ci-workflow.json",
  "title": "CI workflow",
  "type": "object",
  "required": ["on", "jobs"],
  "additionalProperties": false,
  "definitions": {
    "event": {"enum": ["push", "pull_request", "workflow_dispatch", "schedule", "release", "issues",
                       "merge_group", "workflow_call"]},
    "globs": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
    "filter": {"type": ["object", "null"], "additionalProperties": false,
               "properties": {"branches": {"$ref": "#/definitions/globs"}, "tags": {"$ref": "#/definitions/globs"},
                              "paths": {"$ref": "#/definitions/globs"}, "paths-ignore": {"$ref": "#/definitions/globs"}}},
    "env": {"type": "object", "additionalProperties": false,
            "patternProperties": {"^[A-Za-z_][A-Za-z0-9_]*$": {"type": ["string", "number", "boolean"]}}},
    "expression": {"type": "string", "pattern": "^\\$\\{\\{.*\\}\\}$"},
    "job_id": {"type": "string", "pattern": "^[_a-zA-Z][a-zA-Z0-9_-]*$"},
    "step": {
      "type": "object",
      "additionalProperties": false,
      "oneOf": [{"required": ["uses"]}, {"required": ["run"]}],
      "properties": {
        "id": {"$ref": "#/definitions/job_id"},
        "name": {"type": "string"},
        "if": {"type": ["string", "boolean"]},
        "uses": {"type": "string", "pattern": "^[^@ ]+@[^ ]+$"},
        "run": {"type": "string", "minLength": 1},
        "shell": {"type": "string"},
        "with": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
        "env": {"$ref": "#/definitions/env"},
        "continue-on-error": {"oneOf": [{"type": "boolean"}, {"$ref": "#/definitions/expression"}]},
        "timeout-minutes": {"type": "number", "exclusiveMinimum": 0},
        "working-directory": {"type": "string"}
      }
    },
    "job": {
      "type": "object",
      "required": ["runs-on", "steps"],
      "additionalProperties": false,
      "properties": {
        "name": {"type": "string"},
        "needs": {"oneOf": [{"$ref": "#/definitions/job_id"},
                            {"type": "array", "items": {"$ref": "#/definitions/job_id"}, "minItems": 1}]},
        "runs-on": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
        "if": {"type": ["string", "boolean"]},
        "env": {"$ref": "#/definitions/env"},
        "timeout-minutes": {"type": "integer", "minimum": 1, "maximum": 4320},
        "permissions": {
          "oneOf": [
            {"enum": ["read-all", "write-all"]},
            {"type": "object",
             "propertyNames": {"enum": ["actions", "checks", "contents", "deployments", "issues", "packages",
                                        "pull-requests", "statuses"]},
             "additionalProperties": {"enum": ["read", "write", "none"]}}
          ]
        },
        "strategy": {
          "type": "object",
          "required": ["matrix"],
          "additionalProperties": false,
          "properties": {
            "fail-fast": {"type": "boolean"},
            "max-parallel": {"type": "integer", "minimum": 1},
            "matrix": {"type": "object",
                       "properties": {"include": {"type": "array", "items": {"type": "object"}},
                                      "exclude": {"type": "array", "items": {"type": "object"}}},
                       "additionalProperties": {"type": "array", "minItems": 1,
                                                "items": {"type": ["string", "number", "boolean"]}}}
          }
        },
        "services": {"type": "object",
                     "additionalProperties": {"type": "object", "required": ["image"],
                                              "properties": {"image": {"type": "string"},
                                                             "ports": {"type": "array", "items": {"type": ["string", "integer"]}}}}},
        "steps": {"type": "array", "items": {"$ref": "#/definitions/step"}, "minItems": 1}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "on": {
      "oneOf": [
        {"$ref": "#/definitions/event"},
        {"type": "array", "items": {"$ref": "#/definitions/event"}, "minItems": 1},
        {"type": "object", "propertyNames": {"$ref": "#/definitions/event"},
         "properties": {"push": {"$ref": "#/definitions/filter"}, "pull_request": {"$ref": "#/definitions/filter"},
                        "schedule": {"type": "array", "items": {"type": "object", "required": ["cron"],
                                                                "properties": {"cron": {"type": "string"}},
                                                                "additionalProperties": false}}}}
      ]
    },
    "env": {"$ref": "#/definitions/env"},
    "concurrency": {"oneOf": [{"type": "string"},
                              {"type": "object", "required": ["group"], "additionalProperties": false,
                               "properties": {"group": {"type": "string"}, "cancel-in-progress": {"type": "boolean"}}}]},
    "jobs": {"type": "object", "minProperties": 1, "additionalProperties": false,
             "patternProperties": {"^[_a-zA-Z][a-zA-Z0-9_-]*$": {"$ref": "#/definitions/job"}}}
  }
})json";
// clang-format on

inline object ci_step(rng& r) {
  object s;
  if (chance(r, 50)) s["name"] = sentence(r);
  if (chance(r, 45)) {
    s["uses"] = pick(r, {"actions/checkout@v4", "actions/setup-node@v4", "actions/cache@v4",
                         "docker/build-push-action@v6", "actions/upload-artifact@v4"});
    if (chance(r, 50)) {
      s["with"] = object{{"node-version", 16 + 2 * r.below(4)}, {"cache", word(r)}, {"fetch-depth", 0}};
    }
  } else {
    s["run"] = pick(r, {"make test", "npm ci && npm test", "cmake --build build -j2", "./scripts/check"}) +
               std::string(" ") + word(r);
    if (chance(r, 20)) s["shell"] = "bash";
    if (chance(r, 20)) s["working-directory"] = word(r);
  }
  if (chance(r, 15)) s["if"] = "${{ github.event_name == 'push' }}";
  if (chance(r, 15)) s["env"] = object{{"CI", true}, {word(r) + "_DIR", word(r)}};
  if (chance(r, 10)) s["continue-on-error"] = chance(r, 50) ? value(true) : value("${{ matrix.experimental }}");
  if (chance(r, 10)) s["timeout-minutes"] = 5 + r.below(30);
  return s;
}

inline value ci_workflow_instance(rng& r, std::size_t, bool invalid) {
  object w{{"name", sentence(r)}};
  switch (r.below(3)) {
    case 0: w["on"] = pick(r, {"push", "pull_request", "workflow_dispatch"}); break;
    case 1: w["on"] = array{"push", "pull_request"}; break;
    default:
      w["on"] = object{{"push", object{{"branches", array{"main", "release/*"}}}},
                       {"pull_request", object{{"paths", array{"src/**", "tests/**"}}}},
                       {"schedule", array{object{{"cron", "0 3 * * 1"}}}}};
  }
  if (chance(r, 40)) w["env"] = object{{"NODE_ENV", "test"}, {"RETRIES", 3}};
  if (chance(r, 30)) w["concurrency"] = object{{"group", "ci-${{ github.ref }}"}, {"cancel-in-progress", true}};
  object jobs;
  std::vector<std::string> ids;
  for (std::size_t j = 0, n = 1 + r.below(4); j < n; ++j) {
    const std::string id = word(r) + "_" + std::to_string(j);
    object job{{"runs-on", chance(r, 80) ? value(pick(r, {"ubuntu-latest", "windows-latest", "macos-14"}))
                                         : value(array{"self-hosted", "linux"})}};
    if (!ids.empty() && chance(r, 50)) job["needs"] = chance(r, 50) ? value(ids.back()) : value(array{ids.front()});
    if (chance(r, 40)) job["timeout-minutes"] = 10 + r.below(50);
    if (chance(r, 30)) {
      job["strategy"] = object{
          {"fail-fast", false},
          {"matrix", object{{"node", array{18, 20, 22}}, {"os", array{"ubuntu-latest", "macos-14"}}}}};
    }
    if (chance(r, 20)) {
      job["permissions"] = chance(r, 50) ? value("read-all")
                                         : value(object{{"contents", "read"}, {"packages", "write"}});
    }
    if (chance(r, 10)) {
      job["services"] = object{{"db", object{{"image", "postgres:16"}, {"ports", array{"5432:5432"}}}}};
    }
    array steps;
    for (std::size_t s = 0, m = 1 + r.below(7); s < m; ++s) steps.push_back(ci_step(r));
    job["steps"] = std::move(steps);
    jobs[id] = std::move(job);
    ids.push_back(id);
  }
  w["jobs"] = std::move(jobs);
  if (invalid) {
    object& job = w["jobs"].as_object().begin()->value().as_object();
    object& step = job["steps"].as_array().front().as_object();
    switch (r.below(8)) {
      case 0: job.erase("runs-on"); break;  // required
      case 1:                               // oneOf: both
        step["uses"] = "actions/checkout@v4";
        step["run"] = "make";
        break;
      case 2:  // oneOf: neither
        step.erase("uses");
        step.erase("run");
        break;
      case 3: {  // no pattern property matches: additionalProperties
        value copy = job;
        w["jobs"].as_object()["1" + word(r)] = std::move(copy);
        break;
      }
      case 4: job["timeout-minutes"] = 0; break;           // minimum
      case 5: w["on"] = "pushed"; break;                   // enum (oneOf)
      case 6: w["env"] = object{{"bad-key", "x"}}; break;  // additionalProperties
      default: w["runs"] = "ubuntu-latest"; break;         // additionalProperties
    }
  }
  return w;
}

// ---------------------------------------------------------------------------
// compiler_config (2020-12): a TypeScript-like compiler configuration: dozens
// of options, long enums (the library list), `$ref`s into `$defs`.

inline const std::vector<std::string>& compiler_libraries() {
  static const std::vector<std::string> libs = [] {
    std::vector<std::string> v;
    for (const char* base : {"es5", "es6", "es2015", "es2016", "es2017", "es2018", "es2019", "es2020", "es2021",
                             "es2022", "es2023", "esnext"}) {
      v.emplace_back(base);
      for (const char* part : {".array", ".collection", ".promise", ".string", ".intl", ".symbol", ".object"}) {
        v.push_back(std::string(base) + part);
      }
    }
    for (const char* other : {"dom", "dom.iterable", "dom.asynciterable", "webworker", "webworker.importscripts",
                              "scripthost", "decorators", "decorators.legacy"}) {
      v.emplace_back(other);
    }
    return v;
  }();
  return libs;
}

inline constexpr std::string_view compiler_targets[] = {"ES3",    "ES5",    "ES6",    "ES2015", "ES2016",
                                                        "ES2017", "ES2018", "ES2019", "ES2020", "ES2021",
                                                        "ES2022", "ES2023", "ESNext"};
inline constexpr std::string_view compiler_flags[] = {"allowJs",
                                                      "checkJs",
                                                      "declaration",
                                                      "declarationMap",
                                                      "sourceMap",
                                                      "inlineSourceMap",
                                                      "removeComments",
                                                      "noEmit",
                                                      "importHelpers",
                                                      "downlevelIteration",
                                                      "isolatedModules",
                                                      "strict",
                                                      "noImplicitAny",
                                                      "strictNullChecks",
                                                      "strictFunctionTypes",
                                                      "strictBindCallApply",
                                                      "strictPropertyInitialization",
                                                      "noImplicitThis",
                                                      "useUnknownInCatchVariables",
                                                      "alwaysStrict",
                                                      "noUnusedLocals",
                                                      "noUnusedParameters",
                                                      "exactOptionalPropertyTypes",
                                                      "noImplicitReturns",
                                                      "noFallthroughCasesInSwitch",
                                                      "noUncheckedIndexedAccess",
                                                      "noImplicitOverride",
                                                      "allowUnusedLabels",
                                                      "allowUnreachableCode",
                                                      "esModuleInterop",
                                                      "allowSyntheticDefaultImports",
                                                      "forceConsistentCasingInFileNames",
                                                      "resolveJsonModule",
                                                      "skipLibCheck",
                                                      "experimentalDecorators",
                                                      "emitDecoratorMetadata",
                                                      "composite",
                                                      "incremental",
                                                      "preserveSymlinks",
                                                      "verbatimModuleSyntax"};

inline object ref_to(std::string_view pointer) { return object{{"$ref", pointer}}; }

inline object array_of(value items) { return object{{"type", "array"}, {"items", std::move(items)}}; }

inline std::string compiler_config_schema() {
  array targets;
  for (auto t : compiler_targets) targets.emplace_back(t);
  array libs;
  for (const auto& l : compiler_libraries()) libs.emplace_back(l);
  object options{
      {"target", ref_to("#/$defs/target")},
      {"module", object{{"enum", array{"none", "commonjs", "amd", "umd", "system", "es2015", "es2020", "es2022",
                                       "esnext", "node16", "nodenext", "preserve"}}}},
      {"moduleResolution", object{{"enum", array{"classic", "node", "node10", "node16", "nodenext", "bundler"}}}},
      {"jsx", object{{"enum", array{"preserve", "react", "react-jsx", "react-jsxdev", "react-native"}}}},
      {"lib", object{{"type", "array"}, {"uniqueItems", true}, {"items", ref_to("#/$defs/library")}}},
      {"newLine", object{{"enum", array{"crlf", "lf"}}}},
      {"outDir", ref_to("#/$defs/path")},
      {"rootDir", ref_to("#/$defs/path")},
      {"baseUrl", ref_to("#/$defs/path")},
      {"declarationDir", ref_to("#/$defs/path")},
      {"types", array_of(object{{"type", "string"}})},
      {"paths",
       object{{"type", "object"},
              {"additionalProperties", object{{"type", "array"}, {"minItems", 1}, {"items", ref_to("#/$defs/path")}}}}},
      {"maxNodeModuleJsDepth", object{{"type", "integer"}, {"minimum", 0}}},
      {"jsxFactory", object{{"type", "string"}, {"pattern", "^[A-Za-z_$][A-Za-z0-9_$.]*$"}}},
  };
  for (auto f : compiler_flags) options[f] = object{{"type", "boolean"}};
  object defs{
      {"target",
       object{{"anyOf", array{object{{"enum", targets}},
                              object{{"type", "string"}, {"pattern", "^[Ee][Ss]([356]|20[0-9]{2}|[Nn]ext)$"}}}}}},
      {"library", object{{"enum", libs}}},
      {"path", object{{"type", "string"}, {"minLength", 1}}},
      {"compiler_options", object{{"type", "object"}, {"additionalProperties", false}, {"properties", options}}},
      {"reference",
       object{{"type", "object"},
              {"required", array{"path"}},
              {"additionalProperties", false},
              {"properties", object{{"path", ref_to("#/$defs/path")}, {"prepend", object{{"type", "boolean"}}}}}}}};
  object watch{
      {"watchFile", object{{"enum", array{"fixedPollingInterval", "priorityPollingInterval", "dynamicPriorityPolling",
                                          "useFsEvents"}}}},
      {"watchDirectory", object{{"enum", array{"fixedPollingInterval", "dynamicPriorityPolling", "useFsEvents"}}}}};
  object properties{{"extends", object{{"anyOf", array{ref_to("#/$defs/path"), array_of(ref_to("#/$defs/path"))}}}},
                    {"compilerOptions", ref_to("#/$defs/compiler_options")},
                    {"include", array_of(ref_to("#/$defs/path"))},
                    {"exclude", array_of(ref_to("#/$defs/path"))},
                    {"files", array_of(ref_to("#/$defs/path"))},
                    {"references", array_of(ref_to("#/$defs/reference"))},
                    {"compileOnSave", object{{"type", "boolean"}}},
                    {"watchOptions", object{{"type", "object"}, {"properties", std::move(watch)}}}};
  const value schema = object{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                              {"$id", "https://example.com/schemas/compiler-config.json"},
                              {"title", "Compiler configuration"},
                              {"type", "object"},
                              {"$defs", std::move(defs)},
                              {"properties", std::move(properties)}};
  return boost::json::serialize(schema);
}

inline value compiler_config_instance(rng& r, std::size_t, bool invalid) {
  object o;
  o["target"] = chance(r, 85) ? std::string(compiler_targets[r.below(std::size(compiler_targets))])
                              : std::string("es2020");
  o["module"] = pick(r, {"commonjs", "esnext", "nodenext", "es2022"});
  o["moduleResolution"] = pick(r, {"node", "bundler", "nodenext"});
  array lib;
  const auto& libs = compiler_libraries();
  for (std::size_t i = 0, n = 1 + r.below(5), start = r.below(libs.size() - 6); i < n; ++i) {
    lib.emplace_back(libs[start + i]);
  }
  o["lib"] = std::move(lib);
  if (chance(r, 30)) o["jsx"] = "react-jsx";
  for (auto f : compiler_flags) {
    if (chance(r, 35)) o[f] = chance(r, 70);
  }
  o["outDir"] = "dist/" + word(r);
  if (chance(r, 50)) o["rootDir"] = "src";
  if (chance(r, 30)) o["baseUrl"] = ".";
  if (chance(r, 25)) o["paths"] = object{{"@" + word(r) + "/*", array{"src/" + word(r) + "/*"}}};
  if (chance(r, 30)) o["types"] = array{"node", word(r)};
  if (chance(r, 10)) o["maxNodeModuleJsDepth"] = r.below(3);
  object c{{"compilerOptions", std::move(o)}};
  if (chance(r, 40)) c["extends"] = "./tsconfig." + word(r) + ".json";
  c["include"] = array{"src/**/*", word(r) + "/**/*.ts"};
  if (chance(r, 60)) c["exclude"] = array{"node_modules", "dist"};
  if (chance(r, 25)) {
    c["references"] = array{object{{"path", "../" + word(r)}}, object{{"path", "../" + word(r)}, {"prepend", false}}};
  }
  if (chance(r, 10)) c["watchOptions"] = object{{"watchFile", "useFsEvents"}};
  if (invalid) {
    object& opts = c["compilerOptions"].as_object();
    switch (r.below(6)) {
      case 0: opts["target"] = "ES2099x"; break;                          // enum and pattern (anyOf)
      case 1: opts["lib"].as_array().emplace_back("dom.fancy"); break;    // enum
      case 2: opts["strict"] = "true"; break;                             // type
      case 3: c["references"] = array{object{{"prepend", true}}}; break;  // required
      case 4: opts["strictNullCheck"] = true; break;                      // additionalProperties
      default: opts["maxNodeModuleJsDepth"] = -1; break;                  // minimum
    }
  }
  return c;
}

// ---------------------------------------------------------------------------
// ui_card (2020-12): a UI card schema with 200 element kinds and 20 actions
// (each its own definition with `$ref`s to shared ones), elements chosen by an
// anyOf of all kinds, actions by a oneOf, containers recursive; the cards are
// small. The shape where an evaluator's per-instance set-up dominates.

/// A property of a generated element kind.
struct card_property {
  enum kind_t { text, bounded_text, choice, count, flag, words, color, alignment, size } kind;
  std::string name;
  std::vector<std::string> choices;  // for `choice`
};

struct card_element {
  std::string name;  ///< `Text.Block`, …
  std::vector<card_property> properties;
  bool container;
};

inline constexpr std::string_view card_families[] = {
    "Text", "Image", "Media",    "Input",    "Chart", "Table",  "Badge",    "Icon", "Rating", "Progress",
    "Code", "Map",   "Carousel", "Timeline", "Fact",  "Person", "Calendar", "Form", "Layout", "Data"};
inline constexpr std::string_view card_kinds[] = {"Block", "Set",  "Group", "Row",  "Cell",
                                                  "Item",  "List", "Panel", "View", "Field"};
inline constexpr std::string_view card_colors[] = {"default", "dark",    "light",    "accent",
                                                   "good",    "warning", "attention"};

inline const std::vector<card_element>& card_elements() {
  static const std::vector<card_element> elements = [] {
    std::vector<card_element> v;
    rng r(0xCA4D);
    for (auto family : card_families) {
      for (auto kind : card_kinds) {
        card_element e{std::string(family) + "." + std::string(kind), {}, kind == "Set" || kind == "Group"};
        for (std::size_t p = 0, n = 3 + r.below(6); p < n; ++p) {
          card_property prop{static_cast<card_property::kind_t>(r.below(9)), word(r) + std::to_string(p), {}};
          if (prop.kind == card_property::choice) {
            for (std::size_t c = 0, m = 3 + r.below(4); c < m; ++c) prop.choices.push_back(word(r) + std::to_string(c));
          }
          e.properties.push_back(std::move(prop));
        }
        v.push_back(std::move(e));
      }
    }
    return v;
  }();
  return elements;
}

inline constexpr std::string_view card_actions[] = {
    "Action.Submit",   "Action.OpenUrl",   "Action.ShowCard", "Action.ToggleVisibility",
    "Action.Execute",  "Action.Copy",      "Action.Share",    "Action.Download",
    "Action.Call",     "Action.Mail",      "Action.Dismiss",  "Action.Refresh",
    "Action.Navigate", "Action.Play",      "Action.Pause",    "Action.Like",
    "Action.Bookmark", "Action.Subscribe", "Action.Report",   "Action.Translate"};

inline value card_property_schema(const card_property& p) {
  switch (p.kind) {
    case card_property::text: return object{{"type", "string"}};
    case card_property::bounded_text: return object{{"type", "string"}, {"maxLength", 40}};
    case card_property::choice: {
      array values;
      for (const auto& c : p.choices) values.emplace_back(c);
      return object{{"enum", std::move(values)}};
    }
    case card_property::count: return object{{"type", "integer"}, {"minimum", 0}, {"maximum", 100}};
    case card_property::flag: return object{{"type", "boolean"}};
    case card_property::words: return object{{"type", "array"}, {"items", object{{"type", "string"}}}, {"maxItems", 8}};
    case card_property::color: return ref_to("#/$defs/color");
    case card_property::alignment: return ref_to("#/$defs/horizontal_alignment");
    case card_property::size: return object{{"type", "number"}, {"exclusiveMinimum", 0}};
  }
  return object{};
}

inline std::string ui_card_schema() {
  object defs;
  array colors;
  for (auto c : card_colors) colors.emplace_back(c);
  defs["color"] = object{{"enum", colors}};
  defs["horizontal_alignment"] = object{{"enum", array{"left", "center", "right"}}};
  defs["spacing"] = object{{"enum", array{"default", "none", "small", "medium", "large", "extraLarge", "padding"}}};
  defs["id"] = object{{"type", "string"}, {"pattern", "^[A-Za-z][A-Za-z0-9_-]*$"}};
  defs["height"] = object{{"enum", array{"auto", "stretch"}}};
  array element_refs;
  for (const auto& e : card_elements()) {
    object properties{{"type", object{{"const", e.name}}},
                      {"id", ref_to("#/$defs/id")},
                      {"spacing", ref_to("#/$defs/spacing")},
                      {"separator", object{{"type", "boolean"}}},
                      {"isVisible", object{{"type", "boolean"}}},
                      {"height", ref_to("#/$defs/height")},
                      {"requires", object{{"type", "object"}, {"additionalProperties", object{{"type", "string"}}}}}};
    for (const auto& p : e.properties) properties[p.name] = card_property_schema(p);
    if (e.container) properties["items"] = array_of(ref_to("#/$defs/element"));
    defs[e.name] = object{{"type", "object"},
                          {"required", array{"type", value(e.properties.front().name)}},
                          {"additionalProperties", false},
                          {"properties", std::move(properties)}};
    element_refs.push_back(ref_to("#/$defs/" + e.name));
  }
  defs["element"] = object{{"anyOf", std::move(element_refs)}};
  array action_refs;
  for (auto a : card_actions) {
    const std::string name(a);
    defs[name] = object{{"type", "object"},
                        {"required", array{"type"}},
                        {"additionalProperties", false},
                        {"properties", object{{"type", object{{"const", name}}},
                                              {"id", ref_to("#/$defs/id")},
                                              {"title", object{{"type", "string"}}},
                                              {"iconUrl", object{{"type", "string"}, {"format", "uri-reference"}}},
                                              {"style", object{{"enum", array{"default", "positive", "destructive"}}}},
                                              {"url", object{{"type", "string"}, {"format", "uri"}}},
                                              {"data", object{{"type", array{"object", "string"}}}}}}};
    action_refs.push_back(ref_to("#/$defs/" + name));
  }
  defs["action"] = object{{"oneOf", std::move(action_refs)}};
  object properties{{"$schema", object{{"type", "string"}}},
                    {"type", object{{"const", "Card"}}},
                    {"version", object{{"type", "string"}, {"pattern", "^[0-9]+\\.[0-9]+$"}}},
                    {"body", array_of(ref_to("#/$defs/element"))},
                    {"actions", object{{"type", "array"}, {"items", ref_to("#/$defs/action")}, {"maxItems", 6}}},
                    {"fallbackText", object{{"type", "string"}}},
                    {"lang", object{{"type", "string"}, {"pattern", "^[a-z]{2}(-[A-Z]{2})?$"}}},
                    {"minHeight", object{{"type", "string"}, {"pattern", "^[0-9]+px$"}}}};
  const value schema = object{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                              {"$id", "https://example.com/schemas/ui-card.json"},
                              {"title", "UI card"},
                              {"type", "object"},
                              {"required", array{"type", "version"}},
                              {"additionalProperties", false},
                              {"properties", std::move(properties)},
                              {"$defs", std::move(defs)}};
  return boost::json::serialize(schema);
}

inline value card_property_value(rng& r, const card_property& p) {
  switch (p.kind) {
    case card_property::text: return value(sentence(r));
    case card_property::bounded_text: return value(words_of(r, 1 + r.below(3)));
    case card_property::choice: return value(pick(r, p.choices));
    case card_property::count: return value(r.below(101));
    case card_property::flag: return value(chance(r, 50));
    case card_property::words: return value(array{value(word(r)), value(word(r))});
    case card_property::color: return value(card_colors[r.below(std::size(card_colors))]);
    case card_property::alignment: return value(pick(r, {"left", "center", "right"}));
    case card_property::size: return value(0.5 + static_cast<double>(r.below(64)) / 4);
  }
  return value();
}

inline object card_element_value(rng& r, std::size_t depth) {
  const auto& elements = card_elements();
  // Cards use a few kinds most of the time, as real ones do, and any kind now and then.
  const card_element& e = elements[chance(r, 70) ? r.below(12) : r.below(elements.size())];
  object o{{"type", e.name}};
  for (const auto& p : e.properties) {
    if (&p == &e.properties.front() || chance(r, 50)) o[p.name] = card_property_value(r, p);
  }
  if (chance(r, 20)) o["id"] = word(r) + std::to_string(r.below(100));
  if (chance(r, 20)) o["spacing"] = pick(r, {"small", "medium", "none"});
  if (chance(r, 10)) o["separator"] = true;
  if (e.container) {
    array items;
    for (std::size_t i = 0, n = depth < 2 ? 1 + r.below(3) : 0; i < n; ++i) {
      items.push_back(card_element_value(r, depth + 1));
    }
    o["items"] = std::move(items);
  }
  return o;
}

inline value ui_card_instance(rng& r, std::size_t, bool invalid) {
  object card{{"type", "Card"}, {"version", pick(r, {"1.3", "1.5", "1.6"})}};
  array body;
  for (std::size_t i = 0, n = 1 + r.below(4); i < n; ++i) body.push_back(card_element_value(r, 0));
  card["body"] = std::move(body);
  if (chance(r, 60)) {
    array actions;
    for (std::size_t i = 0, n = 1 + r.below(3); i < n; ++i) {
      object a{{"type", card_actions[chance(r, 70) ? r.below(3) : r.below(std::size(card_actions))]},
               {"title", words_of(r, 2)}};
      if (chance(r, 30)) a["url"] = "https://example.com/" + word(r);
      actions.push_back(std::move(a));
    }
    card["actions"] = std::move(actions);
  }
  if (chance(r, 30)) card["lang"] = "en-US";
  if (invalid) {
    object& first = card["body"].as_array().front().as_object();
    switch (r.below(6)) {
      case 0: first["type"] = "Text.Blob"; break;         // anyOf: no kind
      case 1: first["separator"] = "yes"; break;          // type
      case 2: first["unknownProperty"] = word(r); break;  // additionalProperties
      case 3: card["version"] = "1"; break;               // pattern
      case 4:                                             // oneOf: an enum fails in the only kind that matches
        card["actions"] = array{object{{"type", "Action.Submit"}, {"style", "loud"}}};
        break;
      default: card.erase("type"); break;  // required
    }
  }
  return card;
}

// ---------------------------------------------------------------------------
// lint_config (draft-07): a YAML linter's configuration: a small schema of
// rules, each "enable"/"disable" or an object of its options; small instances.

struct lint_rule {
  std::string_view name;
  std::string_view options;  ///< the rule's own properties, as schema text
};

// clang-format off
inline constexpr lint_rule lint_rules[] = {
    {"anchors", R"json({"forbid-undeclared-aliases": {"type": "boolean"}, "forbid-duplicated-anchors": {"type": "boolean"}})json"},
    {"braces", R"json({"forbid": {"oneOf": [{"type": "boolean"}, {"const": "non-empty"}]}, "min-spaces-inside": {"type": "integer", "minimum": -1}, "max-spaces-inside": {"type": "integer", "minimum": -1}})json"},
    {"brackets", R"json({"forbid": {"oneOf": [{"type": "boolean"}, {"const": "non-empty"}]}, "min-spaces-inside": {"type": "integer", "minimum": -1}, "max-spaces-inside": {"type": "integer", "minimum": -1}})json"},
    {"colons", R"json({"max-spaces-before": {"type": "integer", "minimum": -1}, "max-spaces-after": {"type": "integer", "minimum": -1}})json"},
    {"commas", R"json({"max-spaces-before": {"type": "integer", "minimum": -1}, "min-spaces-after": {"type": "integer", "minimum": 0}})json"},
    {"comments", R"json({"require-starting-space": {"type": "boolean"}, "ignore-shebangs": {"type": "boolean"}, "min-spaces-from-content": {"type": "integer", "minimum": 0}})json"},
    {"document-start", R"json({"present": {"type": "boolean"}})json"},
    {"empty-lines", R"json({"max": {"type": "integer", "minimum": 0}, "max-start": {"type": "integer", "minimum": 0}, "max-end": {"type": "integer", "minimum": 0}})json"},
    {"indentation", R"json({"spaces": {"oneOf": [{"type": "integer", "minimum": 1}, {"const": "consistent"}]}, "indent-sequences": {"enum": [true, false, "whatever", "consistent"]}, "check-multi-line-strings": {"type": "boolean"}})json"},
    {"key-duplicates", R"json({"forbid-duplicated-merge-keys": {"type": "boolean"}})json"},
    {"line-length", R"json({"max": {"type": "integer", "minimum": 1}, "allow-non-breakable-words": {"type": "boolean"}, "allow-non-breakable-inline-mappings": {"type": "boolean"}})json"},
    {"new-lines", R"json({"type": {"enum": ["unix", "dos", "platform"]}})json"},
    {"octal-values", R"json({"forbid-implicit-octal": {"type": "boolean"}, "forbid-explicit-octal": {"type": "boolean"}})json"},
    {"quoted-strings", R"json({"quote-type": {"enum": ["any", "single", "double"]}, "required": {"enum": [true, false, "only-when-needed"]}, "extra-allowed": {"type": "array", "items": {"type": "string"}}})json"},
    {"trailing-spaces", R"json({})json"},
    {"truthy", R"json({"allowed-values": {"type": "array", "items": {"enum": ["true", "false", "yes", "no", "on", "off", "True", "False"]}}, "check-keys": {"type": "boolean"}})json"},
};
// clang-format on

inline std::string lint_config_schema() {
  object rules;
  for (const auto& rule : lint_rules) {
    object props = boost::json::parse(rule.options).as_object();
    props["level"] = ref_to("#/definitions/level");
    props["ignore"] = ref_to("#/definitions/paths");
    rules[rule.name] = object{
        {"oneOf",
         array{ref_to("#/definitions/toggle"),
               object{{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(props)}}}}};
  }
  object definitions{
      {"level", object{{"enum", array{"error", "warning"}}}},
      {"toggle", object{{"enum", array{"enable", "disable"}}}},
      {"paths", object{{"oneOf", array{object{{"type", "string"}}, array_of(object{{"type", "string"}})}}}}};
  object properties{
      {"extends", object{{"type", "string"}}},
      {"ignore", ref_to("#/definitions/paths")},
      {"yaml-files", array_of(object{{"type", "string"}})},
      {"locale", object{{"type", "string"}, {"pattern", "^[a-z]{2}_[A-Z]{2}(\\.UTF-8)?$"}}},
      {"rules", object{{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(rules)}}}};
  const value schema = object{{"$schema", "http://json-schema.org/draft-07/schema#"},
                              {"$id", "https://example.com/schemas/lint-config.json"},
                              {"title", "YAML linter configuration"},
                              {"type", "object"},
                              {"additionalProperties", false},
                              {"definitions", std::move(definitions)},
                              {"properties", std::move(properties)}};
  return boost::json::serialize(schema);
}

inline value lint_config_instance(rng& r, std::size_t, bool invalid) {
  object c;
  if (chance(r, 70)) c["extends"] = pick(r, {"default", "relaxed"});
  object rules;
  for (std::size_t i = 0, n = r.below(5); i < n; ++i) {
    const lint_rule& rule = lint_rules[r.below(std::size(lint_rules))];
    const std::string name(rule.name);
    if (chance(r, 40)) {
      rules[name] = pick(r, {"enable", "disable"});
    } else if (name == "line-length") {
      rules[name] = object{{"max", 80 + 20 * r.below(5)}, {"level", "warning"}};
    } else if (name == "indentation") {
      rules[name] = object{{"spaces", chance(r, 50) ? value(2) : value("consistent")},
                           {"indent-sequences", "consistent"}};
    } else if (name == "truthy") {
      rules[name] = object{{"allowed-values", array{"true", "false"}}, {"check-keys", false}};
    } else if (name == "quoted-strings") {
      rules[name] = object{{"quote-type", "single"}, {"required", "only-when-needed"}};
    } else if (name == "empty-lines") {
      rules[name] = object{{"max", 2}, {"max-end", 0}};
    } else {
      rules[name] = object{{"level", pick(r, {"error", "warning"})}};
    }
  }
  c["rules"] = std::move(rules);
  if (chance(r, 30)) c["ignore"] = chance(r, 50) ? value("vendor/\n.cache/\n") : value(array{"vendor/", "*.gen.yaml"});
  if (chance(r, 20)) c["yaml-files"] = array{"*.yaml", "*.yml", ".yamllint"};
  if (chance(r, 10)) c["locale"] = "en_US.UTF-8";
  if (invalid) {
    object& rules_object = c["rules"].as_object();
    switch (r.below(6)) {
      case 0: rules_object["document-start"] = "enabled"; break;                           // oneOf: no branch
      case 1: rules_object["comments"] = object{{"level", "fatal"}}; break;                // enum
      case 2: rules_object["line-length"] = object{{"max", 0}}; break;                     // minimum
      case 3: rules_object["line-lenght"] = "enable"; break;                               // additionalProperties
      case 4: rules_object["quoted-strings"] = object{{"quote-type", "backtick"}}; break;  // enum
      default: c["extends"] = 3; break;                                                    // type
    }
  }
  return c;
}

// ---------------------------------------------------------------------------
// role_meta (draft-07): an automation role's metadata: platforms as an anyOf
// of 30 platform definitions, each a name const and its version enum.

struct platform {
  std::string_view name;
  std::vector<std::string_view> versions;
};

inline const std::vector<platform>& platforms() {
  static const std::vector<platform> list = {
      {"Ubuntu", {"all", "bionic", "focal", "jammy", "noble", "xenial", "trusty", "oracular"}},
      {"Debian", {"all", "stretch", "buster", "bullseye", "bookworm", "trixie", "sid"}},
      {"EL", {"all", "6", "7", "8", "9", "10"}},
      {"Fedora", {"all", "36", "37", "38", "39", "40", "41"}},
      {"opensuse", {"all", "15.4", "15.5", "15.6", "tumbleweed"}},
      {"SLES", {"all", "12SP5", "15SP4", "15SP5", "15SP6"}},
      {"Alpine", {"all", "3.17", "3.18", "3.19", "3.20"}},
      {"ArchLinux", {"all"}},
      {"Amazon", {"all", "2", "2023"}},
      {"macOS", {"all", "12", "13", "14", "15"}},
      {"Windows", {"all", "2016", "2019", "2022", "10", "11"}},
      {"FreeBSD", {"all", "12.4", "13.2", "13.3", "14.0", "14.1"}},
      {"OpenBSD", {"all", "7.3", "7.4", "7.5"}},
      {"NetBSD", {"all", "9.3", "10.0"}},
      {"GenericLinux", {"all", "any"}},
      {"GenericUNIX", {"all", "any"}},
      {"GenericBSD", {"all", "any"}},
      {"Solaris", {"all", "10", "11.3", "11.4"}},
      {"SmartOS", {"all", "any"}},
      {"Gentoo", {"all"}},
      {"Kali", {"all", "2023", "2024"}},
      {"Void Linux", {"all", "any"}},
      {"Cumulus", {"all", "4.4", "5.9"}},
      {"IOS", {"all", "any"}},
      {"Junos", {"all", "any"}},
      {"NXOS", {"all", "any"}},
      {"PAN-OS", {"all", "10.1", "10.2", "11.0", "11.1"}},
      {"vCenter", {"all", "7.0", "8.0"}},
      {"os400", {"all", "7.3", "7.4", "7.5"}},
      {"MacOSX", {"all", "10.15"}},
  };
  return list;
}

// clang-format off
inline constexpr std::string_view role_dependency_schema = R"json({"oneOf": [
  {"type": "string", "minLength": 1},
  {"type": "object", "required": ["role"], "additionalProperties": false,
   "properties": {"role": {"type": "string"}, "src": {"type": "string"}, "version": {"type": "string"},
                  "scm": {"enum": ["git", "hg"]}, "name": {"type": "string"}, "when": {"type": ["string", "boolean"]},
                  "tags": {"type": "array", "items": {"type": "string"}}, "vars": {"type": "object"}}},
  {"type": "object", "required": ["src"], "additionalProperties": false,
   "properties": {"src": {"type": "string"}, "version": {"type": "string"}, "scm": {"enum": ["git", "hg"]},
                  "name": {"type": "string"}}}]})json";

inline constexpr std::string_view role_galaxy_info_schema = R"json({
  "type": "object",
  "required": ["author", "description", "license", "min_ansible_version"],
  "additionalProperties": false,
  "properties": {
    "role_name": {"type": "string", "pattern": "^[a-z][a-z0-9_]+$"},
    "namespace": {"type": "string", "pattern": "^[a-z][a-z0-9_]+$"},
    "author": {"type": "string"},
    "description": {"type": "string"},
    "company": {"type": "string"},
    "issue_tracker_url": {"type": "string", "format": "uri"},
    "license": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
    "min_ansible_version": {"type": "string", "pattern": "^2\\.[0-9]+(\\.[0-9]+)?$"},
    "platforms": {"type": "array", "items": {"$ref": "#/definitions/platform"}},
    "galaxy_tags": {"type": "array", "maxItems": 20, "items": {"type": "string", "pattern": "^[a-z0-9]+$"}},
    "cloud_platforms": {"type": "array", "items": {"enum": ["amazon", "azure", "gcp", "openstack", "vmware"]}},
    "github_branch": {"type": "string"}
  }
})json";
// clang-format on

inline std::string role_meta_schema() {
  object defs;
  array platform_refs;
  for (const auto& p : platforms()) {
    array versions;
    for (auto v : p.versions) versions.emplace_back(v);
    std::string id(p.name);
    for (auto& ch : id) {
      if (ch == ' ' || ch == '-') ch = '_';
    }
    id += "_platform";
    defs[id] = object{{"type", "object"},
                      {"required", array{"name"}},
                      {"additionalProperties", false},
                      {"properties", object{{"name", object{{"const", p.name}}},
                                            {"versions", array_of(object{{"enum", std::move(versions)}})}}}};
    platform_refs.push_back(ref_to("#/definitions/" + id));
  }
  defs["dependency"] = boost::json::parse(role_dependency_schema);
  defs["galaxy_info"] = boost::json::parse(role_galaxy_info_schema);
  defs["platform"] = object{{"anyOf", std::move(platform_refs)}};
  object properties{{"galaxy_info", ref_to("#/definitions/galaxy_info")},
                    {"dependencies", array_of(ref_to("#/definitions/dependency"))},
                    {"allow_duplicates", object{{"type", "boolean"}}},
                    {"collections", array_of(object{{"type", "string"}, {"pattern", "^[a-z0-9_]+\\.[a-z0-9_]+$"}})},
                    {"argument_specs", object{{"type", "object"}}}};
  const value schema = object{{"$schema", "http://json-schema.org/draft-07/schema#"},
                              {"$id", "https://example.com/schemas/role-meta.json"},
                              {"title", "Role metadata"},
                              {"type", "object"},
                              {"required", array{"galaxy_info"}},
                              {"additionalProperties", false},
                              {"definitions", std::move(defs)},
                              {"properties", std::move(properties)}};
  return boost::json::serialize(schema);
}

inline value role_meta_instance(rng& r, std::size_t, bool invalid) {
  object info{{"author", word(r) + " " + word(r)},
              {"description", sentence(r)},
              {"license", chance(r, 80) ? value(pick(r, {"MIT", "BSD-3-Clause", "GPL-3.0-or-later", "Apache-2.0"}))
                                        : value(array{"MIT", "Apache-2.0"})},
              {"min_ansible_version", "2." + std::to_string(9 + r.below(9))}};
  if (chance(r, 60)) info["role_name"] = word(r) + "_" + word(r);
  if (chance(r, 40)) info["namespace"] = word(r);
  if (chance(r, 30)) info["company"] = word(r) + " Ltd";
  if (chance(r, 20)) info["issue_tracker_url"] = "https://example.com/" + word(r) + "/issues";
  array platform_list;
  const auto& all = platforms();
  for (std::size_t i = 0, n = 1 + r.below(5); i < n; ++i) {
    const platform& p = all[chance(r, 60) ? r.below(6) : r.below(all.size())];
    object entry{{"name", p.name}};
    array versions;
    for (std::size_t v = 0, m = 1 + r.below(3); v < m; ++v)
      versions.emplace_back(p.versions[r.below(p.versions.size())]);
    entry["versions"] = std::move(versions);
    platform_list.push_back(std::move(entry));
  }
  info["platforms"] = std::move(platform_list);
  array tags;
  for (std::size_t i = 0, n = r.below(8); i < n; ++i) tags.emplace_back(word(r));
  info["galaxy_tags"] = std::move(tags);
  object meta{{"galaxy_info", std::move(info)}};
  array deps;
  for (std::size_t i = 0, n = r.below(4); i < n; ++i) {
    switch (r.below(3)) {
      case 0: deps.emplace_back(word(r) + "." + word(r)); break;
      case 1:
        deps.push_back(object{{"role", word(r)}, {"version", semver(r)}, {"when", "ansible_os_family == 'Debian'"}});
        break;
      default:
        deps.push_back(object{{"src", "https://example.com/" + word(r) + ".git"}, {"scm", "git"}, {"name", word(r)}});
    }
  }
  meta["dependencies"] = std::move(deps);
  if (chance(r, 20)) meta["allow_duplicates"] = false;
  if (chance(r, 20)) meta["collections"] = array{"community.general", word(r) + "." + word(r)};
  if (invalid) {
    object& gi = meta["galaxy_info"].as_object();
    object& first_platform = gi["platforms"].as_array().front().as_object();
    switch (r.below(7)) {
      case 0: first_platform["name"] = "Ubunto"; break;                             // anyOf: no platform
      case 1: first_platform["versions"].as_array().emplace_back("warty2"); break;  // enum
      case 2: gi.erase("author"); break;                                            // required
      case 3: gi["galaxy_tags"] = array{"Web"}; break;                              // pattern
      case 4: gi["min_ansible_version"] = "3"; break;                               // pattern
      case 5: meta["dependencies"] = array{object{{"version", "1.0.0"}}}; break;    // oneOf: no branch
      default: gi["min_ansible_versions"] = "2.9"; break;                           // additionalProperties
    }
  }
  return meta;
}

// ---------------------------------------------------------------------------
// api_description (2020-12): an OpenAPI-like document: paths and responses
// by patternProperties, recursive schema objects through `$ref`, if/then on
// path parameters; larger instances.

// clang-format off
inline constexpr std::string_view api_description_schema = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/schemas/api-description.json",
  "title": "API description",
  "type": "object",
  "required": ["openapi", "info", "paths"],
  "additionalProperties": false,
  "patternProperties": {"^x-": true},
  "$defs": {
    "reference": {"type": "object", "required": ["$ref"], "additionalProperties": false,
                  "properties": {"$ref": {"type": "string", "format": "uri-reference"}}},
    "schema_or_reference": {"oneOf": [{"$ref": "#/$defs/reference"}, {"$ref": "#/$defs/schema"}]},
    "schema": {
      "type": "object",
      "additionalProperties": false,
      "patternProperties": {"^x-": true},
      "properties": {
        "type": {"enum": ["object", "array", "string", "integer", "number", "boolean", "null"]},
        "format": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/schema_or_reference"}},
        "required": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
        "items": {"$ref": "#/$defs/schema_or_reference"},
        "additionalProperties": {"oneOf": [{"type": "boolean"}, {"$ref": "#/$defs/schema_or_reference"}]},
        "enum": {"type": "array", "minItems": 1},
        "allOf": {"type": "array", "items": {"$ref": "#/$defs/schema_or_reference"}},
        "oneOf": {"type": "array", "items": {"$ref": "#/$defs/schema_or_reference"}},
        "anyOf": {"type": "array", "items": {"$ref": "#/$defs/schema_or_reference"}},
        "nullable": {"type": "boolean"},
        "minimum": {"type": "number"},
        "maximum": {"type": "number"},
        "minLength": {"type": "integer", "minimum": 0},
        "maxLength": {"type": "integer", "minimum": 0},
        "pattern": {"type": "string"},
        "example": true
      }
    },
    "parameter": {
      "type": "object",
      "required": ["name", "in"],
      "additionalProperties": false,
      "properties": {
        "name": {"type": "string"},
        "in": {"enum": ["query", "header", "path", "cookie"]},
        "description": {"type": "string"},
        "required": {"type": "boolean"},
        "deprecated": {"type": "boolean"},
        "schema": {"$ref": "#/$defs/schema_or_reference"}
      },
      "if": {"properties": {"in": {"const": "path"}}},
      "then": {"required": ["required"], "properties": {"required": {"const": true}}}
    },
    "parameters": {"type": "array",
                   "items": {"oneOf": [{"$ref": "#/$defs/reference"}, {"$ref": "#/$defs/parameter"}]}},
    "media_types": {
      "type": "object",
      "propertyNames": {"pattern": "^[a-z]+/[a-z0-9.+-]+$"},
      "additionalProperties": {"type": "object", "additionalProperties": false,
                               "properties": {"schema": {"$ref": "#/$defs/schema_or_reference"}, "example": true}}
    },
    "response": {"type": "object", "required": ["description"], "additionalProperties": false,
                 "properties": {"description": {"type": "string"},
                                "headers": {"type": "object", "additionalProperties": {"type": "object"}},
                                "content": {"$ref": "#/$defs/media_types"}}},
    "operation": {
      "type": "object",
      "required": ["responses"],
      "additionalProperties": false,
      "patternProperties": {"^x-": true},
      "properties": {
        "operationId": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]*$"},
        "summary": {"type": "string"},
        "description": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "parameters": {"$ref": "#/$defs/parameters"},
        "requestBody": {"type": "object", "required": ["content"], "additionalProperties": false,
                        "properties": {"description": {"type": "string"}, "required": {"type": "boolean"},
                                       "content": {"$ref": "#/$defs/media_types"}}},
        "responses": {"type": "object", "minProperties": 1, "additionalProperties": false,
                      "patternProperties": {"^([1-5][0-9][0-9]|default)$":
                                            {"oneOf": [{"$ref": "#/$defs/reference"}, {"$ref": "#/$defs/response"}]}}},
        "deprecated": {"type": "boolean"},
        "security": {"type": "array",
                     "items": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}}
      }
    },
    "path_item": {
      "type": "object",
      "additionalProperties": false,
      "patternProperties": {"^x-": true},
      "properties": {
        "summary": {"type": "string"}, "description": {"type": "string"},
        "get": {"$ref": "#/$defs/operation"}, "put": {"$ref": "#/$defs/operation"},
        "post": {"$ref": "#/$defs/operation"}, "delete": {"$ref": "#/$defs/operation"},
        "patch": {"$ref": "#/$defs/operation"}, "head": {"$ref": "#/$defs/operation"},
        "parameters": {"$ref": "#/$defs/parameters"}
      }
    }
  },
  "properties": {
    "openapi": {"type": "string", "pattern": "^3\\.[01]\\.[0-9]+$"},
    "info": {"type": "object", "required": ["title", "version"], "additionalProperties": false,
             "properties": {"title": {"type": "string"}, "version": {"type": "string"},
                            "description": {"type": "string"},
                            "license": {"type": "object", "required": ["name"],
                                        "properties": {"name": {"type": "string"}, "url": {"type": "string", "format": "uri"}}},
                            "contact": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}}},
    "servers": {"type": "array", "items": {"type": "object", "required": ["url"], "additionalProperties": false,
                                            "properties": {"url": {"type": "string"}, "description": {"type": "string"}}}},
    "tags": {"type": "array", "items": {"type": "object", "required": ["name"],
                                         "properties": {"name": {"type": "string"}, "description": {"type": "string"}}}},
    "paths": {"type": "object", "additionalProperties": false,
              "patternProperties": {"^/": {"$ref": "#/$defs/path_item"}}},
    "components": {"type": "object", "additionalProperties": false,
                   "properties": {"schemas": {"type": "object", "additionalProperties": {"$ref": "#/$defs/schema_or_reference"}},
                                  "parameters": {"type": "object", "additionalProperties": {"$ref": "#/$defs/parameter"}},
                                  "responses": {"type": "object", "additionalProperties": {"$ref": "#/$defs/response"}}}}
  }
})json";
// clang-format on

inline value api_schema_object(rng& r, std::size_t depth, const std::vector<std::string>& names) {
  if (!names.empty() && chance(r, 25)) return ref_to("#/components/schemas/" + pick(r, names));
  const std::string_view type = depth >= 3 ? pick(r, {"string", "integer", "number", "boolean"})
                                           : pick(r, {"object", "object", "array", "string", "integer"});
  object s{{"type", type}};
  if (chance(r, 40)) s["description"] = sentence(r);
  if (type == "object") {
    object props;
    array required;
    for (std::size_t i = 0, n = 2 + r.below(5); i < n; ++i) {
      const std::string name = word(r) + "_" + std::to_string(i);
      props[name] = api_schema_object(r, depth + 1, names);
      if (chance(r, 40)) required.emplace_back(name);
    }
    s["properties"] = std::move(props);
    if (!required.empty()) s["required"] = std::move(required);
    if (chance(r, 30)) s["additionalProperties"] = false;
  } else if (type == "array") {
    s["items"] = api_schema_object(r, depth + 1, names);
  } else if (type == "string") {
    if (chance(r, 30)) s["format"] = pick(r, {"date-time", "uuid", "email", "uri"});
    if (chance(r, 20)) s["enum"] = array{value(word(r)), value(word(r)), value(word(r))};
    if (chance(r, 20)) s["maxLength"] = 64 + r.below(200);
  } else if (type == "integer" || type == "number") {
    if (chance(r, 30)) s["minimum"] = 0;
    if (chance(r, 10)) s["maximum"] = 1000;
  }
  if (chance(r, 10)) s["nullable"] = true;
  return s;
}

inline object api_operation(rng& r, std::string_view method, const std::string& resource,
                            const std::vector<std::string>& names) {
  object op{{"operationId", std::string(method) + "_" + resource}, {"summary", sentence(r)}, {"tags", array{resource}}};
  array params{object{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", object{{"type", "string"}}}}};
  if (chance(r, 50)) {
    params.push_back(object{
        {"name", "limit"}, {"in", "query"}, {"schema", object{{"type", "integer"}, {"minimum", 1}}}});
  }
  op["parameters"] = std::move(params);
  if (method == "post") {
    op["requestBody"] = object{
        {"required", true},
        {"content", object{{"application/json", object{{"schema", api_schema_object(r, 1, names)}}}}}};
  }
  object responses{
      {"200", object{{"description", "OK"},
                     {"content", object{{"application/json", object{{"schema", api_schema_object(r, 1, names)}}}}}}}};
  if (chance(r, 50)) responses["404"] = object{{"description", "Not found"}};
  if (chance(r, 30)) responses["default"] = ref_to("#/components/responses/problem");
  op["responses"] = std::move(responses);
  return op;
}

inline value api_description_instance(rng& r, std::size_t, bool invalid) {
  object doc{{"openapi", chance(r, 50) ? "3.0.3" : "3.1.0"},
             {"info", object{{"title", words_of(r, 2) + " API"}, {"version", semver(r)}, {"description", sentence(r)}}},
             {"servers", array{object{{"url", "https://api.example.com/v1"}}}}};
  std::vector<std::string> names;
  object schemas;
  for (std::size_t i = 0, n = 2 + r.below(5); i < n; ++i) {
    const std::string name = word(r) + std::to_string(i);
    schemas[name] = api_schema_object(r, 1, names);
    names.push_back(name);
  }
  object paths;
  for (std::size_t p = 0, n = 2 + r.below(6); p < n; ++p) {
    const std::string resource = word(r) + std::to_string(p);
    object item;
    for (const std::string_view method : {"get", "post", "delete"}) {
      if (method != "get" && chance(r, 50)) continue;
      item[method] = api_operation(r, method, resource, names);
    }
    paths["/" + resource + "/{id}"] = std::move(item);
  }
  doc["paths"] = std::move(paths);
  doc["components"] = object{{"schemas", std::move(schemas)},
                             {"responses", object{{"problem", object{{"description", "A problem"}}}}}};
  if (invalid) {
    object& get = doc["paths"].as_object().begin()->value().as_object()["get"].as_object();
    object& first_parameter = get["parameters"].as_array().front().as_object();
    switch (r.below(7)) {
      case 0: doc["paths"].as_object()["users"] = object{}; break;                         // patternProperties
      case 1: get["responses"].as_object()["2000"] = object{{"description", "x"}}; break;  // patternProperties
      case 2: first_parameter.erase("in"); break;                                          // required (oneOf)
      case 3: first_parameter.erase("required"); break;                                    // if/then
      case 4: doc["components"].as_object()["schemas"].as_object()["bad"] = object{{"type", "map"}}; break;  // enum
      case 5: doc["openapi"] = "2.0"; break;                                                                 // pattern
      default: get["operationId"] = "get-" + word(r); break;                                                 // pattern
    }
  }
  return doc;
}

// ---------------------------------------------------------------------------
// geojson (draft-07): feature collections: geometries as a oneOf of typed
// objects, nested arrays of numbers.

// clang-format off
inline constexpr std::string_view geojson_schema = R"json({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://example.com/schemas/feature-collection.json",
  "title": "Feature collection",
  "type": "object",
  "required": ["type", "features"],
  "definitions": {
    "position": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}},
    "bbox": {"type": "array", "minItems": 4, "items": {"type": "number"}},
    "line": {"type": "array", "minItems": 2, "items": {"$ref": "#/definitions/position"}},
    "ring": {"type": "array", "minItems": 4, "items": {"$ref": "#/definitions/position"}},
    "polygon": {"type": "array", "items": {"$ref": "#/definitions/ring"}},
    "Point": {"type": "object", "required": ["type", "coordinates"],
              "properties": {"type": {"const": "Point"}, "coordinates": {"$ref": "#/definitions/position"},
                             "bbox": {"$ref": "#/definitions/bbox"}}},
    "MultiPoint": {"type": "object", "required": ["type", "coordinates"],
                   "properties": {"type": {"const": "MultiPoint"},
                                  "coordinates": {"type": "array", "items": {"$ref": "#/definitions/position"}},
                                  "bbox": {"$ref": "#/definitions/bbox"}}},
    "LineString": {"type": "object", "required": ["type", "coordinates"],
                   "properties": {"type": {"const": "LineString"}, "coordinates": {"$ref": "#/definitions/line"},
                                  "bbox": {"$ref": "#/definitions/bbox"}}},
    "MultiLineString": {"type": "object", "required": ["type", "coordinates"],
                        "properties": {"type": {"const": "MultiLineString"},
                                       "coordinates": {"type": "array", "items": {"$ref": "#/definitions/line"}},
                                       "bbox": {"$ref": "#/definitions/bbox"}}},
    "Polygon": {"type": "object", "required": ["type", "coordinates"],
                "properties": {"type": {"const": "Polygon"}, "coordinates": {"$ref": "#/definitions/polygon"},
                               "bbox": {"$ref": "#/definitions/bbox"}}},
    "MultiPolygon": {"type": "object", "required": ["type", "coordinates"],
                     "properties": {"type": {"const": "MultiPolygon"},
                                    "coordinates": {"type": "array", "items": {"$ref": "#/definitions/polygon"}},
                                    "bbox": {"$ref": "#/definitions/bbox"}}},
    "GeometryCollection": {"type": "object", "required": ["type", "geometries"],
                           "properties": {"type": {"const": "GeometryCollection"},
                                          "geometries": {"type": "array", "items": {"$ref": "#/definitions/geometry"}},
                                          "bbox": {"$ref": "#/definitions/bbox"}}},
    "geometry": {"oneOf": [{"$ref": "#/definitions/Point"}, {"$ref": "#/definitions/MultiPoint"},
                           {"$ref": "#/definitions/LineString"}, {"$ref": "#/definitions/MultiLineString"},
                           {"$ref": "#/definitions/Polygon"}, {"$ref": "#/definitions/MultiPolygon"},
                           {"$ref": "#/definitions/GeometryCollection"}]},
    "feature": {"type": "object", "required": ["type", "properties", "geometry"],
                "properties": {"type": {"const": "Feature"}, "id": {"type": ["string", "number"]},
                               "properties": {"type": ["object", "null"]},
                               "geometry": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/geometry"}]},
                               "bbox": {"$ref": "#/definitions/bbox"}}}
  },
  "properties": {
    "type": {"const": "FeatureCollection"},
    "features": {"type": "array", "items": {"$ref": "#/definitions/feature"}},
    "bbox": {"$ref": "#/definitions/bbox"}
  }
})json";
// clang-format on

inline value geo_position(rng& r) {
  // Five decimals, as most GeoJSON writers round to.
  const double lon = -180.0 + static_cast<double>(r.below(36000000)) / 1e5;
  const double lat = -90.0 + static_cast<double>(r.below(18000000)) / 1e5;
  return array{lon, lat};
}

inline array geo_line(rng& r, std::size_t n) {
  array line;
  for (std::size_t i = 0; i < n; ++i) line.push_back(geo_position(r));
  return line;
}

inline array geo_ring(rng& r) {
  array ring = geo_line(r, 3 + r.below(8));
  ring.push_back(ring.front());
  return ring;
}

inline object geo_geometry(rng& r, bool collection) {
  switch (r.below(collection ? 7 : 6)) {
    case 0: return object{{"type", "Point"}, {"coordinates", geo_position(r)}};
    case 1: return object{{"type", "MultiPoint"}, {"coordinates", geo_line(r, 1 + r.below(6))}};
    case 2: return object{{"type", "LineString"}, {"coordinates", geo_line(r, 2 + r.below(12))}};
    case 3:
      return object{{"type", "MultiLineString"}, {"coordinates", array{geo_line(r, 2 + r.below(6)), geo_line(r, 2)}}};
    case 4: return object{{"type", "Polygon"}, {"coordinates", array{geo_ring(r)}}};
    case 5: return object{{"type", "MultiPolygon"}, {"coordinates", array{array{geo_ring(r)}, array{geo_ring(r)}}}};
    default:
      return object{{"type", "GeometryCollection"},
                    {"geometries", array{geo_geometry(r, false), geo_geometry(r, false)}}};
  }
}

inline value geojson_instance(rng& r, std::size_t, bool invalid) {
  array features;
  for (std::size_t i = 0, n = 1 + r.below(12); i < n; ++i) {
    object f{{"type", "Feature"},
             {"id", chance(r, 50) ? value(word(r) + std::to_string(i)) : value(i)},
             {"properties", chance(r, 90) ? value(object{{"name", words_of(r, 2)}, {"population", r.below(1000000)}})
                                          : value(nullptr)},
             {"geometry", chance(r, 95) ? value(geo_geometry(r, true)) : value(nullptr)}};
    features.push_back(std::move(f));
  }
  object fc{{"type", "FeatureCollection"}, {"features", std::move(features)}};
  if (chance(r, 30)) fc["bbox"] = array{-10.5, 35.25, 30.125, 60.0};
  if (invalid) {
    object& first = fc["features"].as_array().front().as_object();
    switch (r.below(5)) {
      case 0: first["geometry"] = object{{"type", "Point"}, {"coordinates", array{12.5}}}; break;  // minItems
      case 1: first["geometry"] = object{{"type", "Polygon"}, {"coordinates", array{geo_line(r, 3)}}}; break;  // ring
      case 2: first["geometry"] = object{{"type", "Pointe"}, {"coordinates", geo_position(r)}}; break;         // oneOf
      case 3: first.erase("properties"); break;                                                              // required
      default: first["geometry"] = object{{"type", "Point"}, {"coordinates", array{"12.5", 41.25}}}; break;  // type
    }
  }
  return fc;
}

// ---------------------------------------------------------------------------
// receipt (2020-12): the receipts of examples/data at sizes from 300 B to 4 KB,
// with the structural faults of documents.hpp.

inline catalog_case receipt_case(std::string schema_text) {
  catalog_case c{"receipt",
                 "2020-12",
                 "the receipt schema of examples/data: OCR receipts of 300 B to 4 KB",
                 std::move(schema_text),
                 {},
                 0,
                 0};
  constexpr unsigned faults[] = {extra_item_field, missing_currency,    unknown_currency, bad_sku,
                                 zero_quantity,    negative_unit_price, total_as_string,  long_description};
  constexpr std::size_t count = 600;
  constexpr std::size_t invalid_every = 8;
  rng r(0x4EC3);
  for (std::size_t i = 0; i < count; ++i) {
    const bool invalid = i % invalid_every == invalid_every - 1;
    const std::size_t bytes = 300 + r.below(3800);
    c.instances.push_back({make_receipt(bytes, invalid ? faults[r.below(std::size(faults))] : 0u), !invalid});
  }
  c.expected_invalid = count / invalid_every;
  c.expected_valid = count - c.expected_invalid;
  return c;
}

}  // namespace detail

/// Every case, in a fixed order. `receipt_schema` is the text of
/// examples/data/receipt.schema.json (the caller reads it).
inline std::vector<catalog_case> make_cases(const std::string& receipt_schema) {
  using namespace detail;
  std::vector<catalog_case> cases;
  cases.push_back(generate("package_manifest", "draft-07", "a package manifest: oneOf string-or-object, propertyNames",
                           compact(package_manifest_schema), 1500, 10, 0x9AC4, package_manifest_instance));
  cases.push_back(generate("ci_workflow", "draft-07", "a CI workflow: jobs by patternProperties, steps oneOf uses/run",
                           compact(ci_workflow_schema), 1000, 10, 0xC1F0, ci_workflow_instance));
  cases.push_back(generate("compiler_config", "2020-12", "a compiler configuration: ~60 options, long enums",
                           compiler_config_schema(), 1500, 10, 0x75C0, compiler_config_instance));
  cases.push_back(generate("ui_card", "2020-12", "a UI card: 220 definitions, anyOf of 200 kinds; small cards",
                           ui_card_schema(), 2000, 10, 0xCA4D5, ui_card_instance));
  cases.push_back(generate("lint_config", "draft-07", "a YAML linter's configuration: small schema, small files",
                           lint_config_schema(), 3000, 10, 0x1147, lint_config_instance));
  cases.push_back(generate("role_meta", "draft-07", "a role's metadata: anyOf of 30 platforms with version enums",
                           role_meta_schema(), 1500, 10, 0xA45B, role_meta_instance));
  cases.push_back(generate("api_description", "2020-12", "an OpenAPI-like description: recursive schema objects",
                           compact(api_description_schema), 200, 10, 0x0A91, api_description_instance));
  cases.push_back(generate("geojson", "draft-07", "GeoJSON feature collections: oneOf geometries, number arrays",
                           compact(geojson_schema), 400, 10, 0x6E0, geojson_instance));
  cases.push_back(receipt_case(receipt_schema));
  return cases;
}

}  // namespace llmdlq_bench::catalog
