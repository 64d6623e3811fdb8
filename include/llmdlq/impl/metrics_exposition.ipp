// SPDX-License-Identifier: MIT
// Definitions for metrics_exposition.hpp.
#pragma once

#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/metrics_exposition.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline metric_family family(std::string name, std::string help, metric_type type) {
  return metric_family{std::move(name), std::move(help), type, {}, std::nullopt};
}

inline void escape_into(std::string& out, std::string_view text, bool quotes) {
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quotes) out += "\\\"";
    else out += c;
  }
}

inline std::string prometheus_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

inline void write_series(std::string& out, std::string_view name,
                         const std::vector<std::pair<std::string, std::string>>& labels, double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out += ',';
      out += labels[i].first;
      out += "=\"";
      escape_into(out, labels[i].second, true);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += prometheus_number(value);
  out += '\n';
}

inline std::string_view type_name(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
  }
  return "untyped";
}

}  // namespace detail

LLMDLQ_INLINE std::vector<metric_family> metric_families(const metrics_snapshot& s) {
  using detail::family;
  std::vector<metric_family> out;
  auto count = [](std::uint64_t n) { return static_cast<double>(n); };

  auto& processed = out.emplace_back(family("llmdlq_processed_total",
                                            "Responses judged: accepted or dead-lettered.", metric_type::counter));
  processed.samples.push_back({{}, count(s.processed)});
  auto& accepted = out.emplace_back(family("llmdlq_accepted_total",
                                           "Responses accepted, repaired or not.", metric_type::counter));
  accepted.samples.push_back({{}, count(s.accepted)});

  auto& repaired = out.emplace_back(family("llmdlq_repaired_total",
                                           "Local repairs in accepted responses, by repair code and tier.",
                                           metric_type::counter));
  for (const auto& r : s.repaired) repaired.samples.push_back({{{"code", r.code}, {"tier", r.tier}}, count(r.count)});

  auto& dead = out.emplace_back(family("llmdlq_dead_lettered_total",
                                       "Dead letters made, by failure category, triage class and failure code.",
                                       metric_type::counter));
  for (const auto& d : s.dead_lettered) {
    dead.samples.push_back({{{"category", d.category}, {"triage", d.triage}, {"code", d.code}}, count(d.count)});
  }

  auto& publishes = out.emplace_back(family("llmdlq_sink_publishes_total",
                                            "Envelopes a dead-letter sink stored, duplicates included.",
                                            metric_type::counter));
  auto& failures = out.emplace_back(family("llmdlq_sink_failures_total",
                                           "Publishes a dead-letter sink failed, by sink_errc.", metric_type::counter));
  for (const auto& k : s.sinks) {
    if (k.publishes > 0) publishes.samples.push_back({{{"sink", k.sink}}, count(k.publishes)});
    for (std::size_t reason = 0; reason < k.failures.size(); ++reason) {
      if (k.failures[reason] == 0) continue;
      failures.samples.push_back(
          {{{"sink", k.sink}, {"reason", std::string(to_string(static_cast<sink_errc>(reason)))}},
           count(k.failures[reason])});
    }
  }

  auto& replays = out.emplace_back(family("llmdlq_replays_total",
                                          "Recovery steps run, by step and outcome (the stop reason, or continued).",
                                          metric_type::counter));
  for (const auto& r : s.replays) {
    replays.samples.push_back({{{"step", r.step}, {"outcome", r.outcome}}, count(r.count)});
  }

  auto& tokens = out.emplace_back(family("llmdlq_tokens_total", "Tokens model calls used, by model and kind.",
                                         metric_type::counter));
  for (const auto& t : s.tokens) {
    tokens.samples.push_back({{{"model", t.model}, {"kind", "prompt"}}, count(t.prompt)});
    tokens.samples.push_back({{{"model", t.model}, {"kind", "completion"}}, count(t.completion)});
  }

  auto& deaths = out.emplace_back(family("llmdlq_stream_deaths_total",
                                         "Streamed answers found dead before their end, by category.",
                                         metric_type::counter));
  auto& paid = out.emplace_back(family("llmdlq_stream_bytes_before_death_total",
                                       "Answer bytes received before a streamed answer was found dead, by category.",
                                       metric_type::counter));
  for (const auto& d : s.stream_deaths) {
    deaths.samples.push_back({{{"category", d.category}}, count(d.count)});
    paid.samples.push_back({{{"category", d.category}}, count(d.bytes)});
  }

  auto& path = out.emplace_back(family("llmdlq_failure_path_seconds",
                                       "Time to build a dead letter's envelope, once its failure is known.",
                                       metric_type::histogram));
  path.histogram = s.failure_path;

  auto& pending = out.emplace_back(family("llmdlq_pending_records", "Dead letters pending in the store.",
                                          metric_type::gauge));
  if (s.pending_records) pending.samples.push_back({{}, count(*s.pending_records)});
  auto& age = out.emplace_back(family("llmdlq_oldest_pending_age_seconds",
                                      "How long the oldest pending dead letter has waited.", metric_type::gauge));
  if (s.oldest_pending_age_seconds) age.samples.push_back({{}, *s.oldest_pending_age_seconds});
  return out;
}

LLMDLQ_INLINE std::string to_prometheus_text(const metrics_snapshot& snapshot) {
  std::string out;
  for (const auto& f : metric_families(snapshot)) {
    out += "# HELP ";
    out += f.name;
    out += ' ';
    detail::escape_into(out, f.help, false);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += detail::type_name(f.type);
    out += '\n';
    for (const auto& sample : f.samples) detail::write_series(out, f.name, sample.labels, sample.value);
    if (f.histogram) {
      const auto& h = *f.histogram;
      const std::string bucket = f.name + "_bucket";
      for (std::size_t i = 0; i < h.cumulative.size(); ++i) {
        const double bound = i < h.upper_bounds.size() ? h.upper_bounds[i] : std::numeric_limits<double>::infinity();
        detail::write_series(out, bucket, {{"le", detail::prometheus_number(bound)}},
                             static_cast<double>(h.cumulative[i]));
      }
      detail::write_series(out, f.name + "_sum", {}, h.sum);
      detail::write_series(out, f.name + "_count", {}, static_cast<double>(h.count));
    }
  }
  return out;
}

LLMDLQ_END_NAMESPACE
