// SPDX-License-Identifier: MIT
#include "charts.hpp"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <llmdlq/dlq_rate_alarm.hpp>
#include <llmdlq/taxonomy.hpp>

#include "html.hpp"

namespace llmdlq::cli {
namespace {

constexpr int chart_width = 720;
constexpr int chart_height = 240;
constexpr int margin_left = 48;
constexpr int margin_bottom = 40;
constexpr int margin_top = 12;

// One colour per category, in the taxonomy's order: the eight colours of
// Okabe and Ito's colour-blind-safe palette.
constexpr std::pair<failure_category, std::string_view> category_colours[] = {
    {failure_category::poison, "#000000"},   {failure_category::refusal, "#CC79A7"},
    {failure_category::empty, "#F0E442"},    {failure_category::truncated, "#E69F00"},
    {failure_category::syntax, "#D55E00"},   {failure_category::schema, "#0072B2"},
    {failure_category::semantic, "#56B4E9"}, {failure_category::low_confidence, "#009E73"},
};
constexpr std::string_view unknown_category_colour = "#999999";

std::string day_of(const dlq_timeline_bucket& bucket) { return format_rfc3339(bucket.start).substr(0, 10); }

// A table of counts by key; `swatches` puts each key's category colour before it.
std::string count_table(std::string_view title, const std::map<std::string, std::uint64_t>& counts,
                        bool swatches = false) {
  std::string out = fmt::format("<table class=\"counts\"><caption>{}</caption><thead><tr><th>{}</th><th>letters</th>"
                                "</tr></thead><tbody>",
                                html_escape(title), html_escape(title.substr(title.rfind(' ') + 1)));
  for (const auto& [key, count] : counts) {
    out += fmt::format("<tr><td>{}{}</td><td class=\"number\">{}</td></tr>",
                       swatches ? category_swatch_html(key) + " " : std::string(), html_escape(key), count);
  }
  if (counts.empty()) out += "<tr><td colspan=\"2\">none</td></tr>";
  return out + "</tbody></table>";
}

// The y axis: a round maximum at or above `top`, and its gridlines.
double axis_top(double top) {
  if (top <= 0) return 1;
  double step = 1;
  while (step * 10 < top) step *= 10;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= top) return step * m;
  }
  return step * 10;
}

std::string axes(double top, std::string_view unit, const std::vector<dlq_timeline_bucket>& timeline, double slot) {
  const int plot_height = chart_height - margin_top - margin_bottom;
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    const double y = margin_top + plot_height * (1 - i / 4.0);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>", margin_left, y,
                       chart_width, y);
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", margin_left - 4,
                       y + 4, unit == "%" ? fmt::format("{:g}%", top * i / 4) : fmt::format("{:g}", top * i / 4));
  }
  // At most about 8 day labels.
  const std::size_t every = std::max<std::size_t>(1, (timeline.size() + 7) / 8);
  for (std::size_t i = 0; i < timeline.size(); i += every) {
    out += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       margin_left + slot * (i + 0.5), chart_height - margin_bottom + 16,
                       html_escape(day_of(timeline[i]).substr(5)));
  }
  return out;
}

std::string svg_open(std::string_view label) {
  return fmt::format("<svg class=\"chart\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
                     "aria-label=\"{}\">",
                     chart_width, chart_height, chart_width, chart_height, html_escape(label));
}

}  // namespace

std::string_view category_colour(std::string_view category) {
  const auto known = failure_category_from(category);
  if (!known) return unknown_category_colour;
  for (const auto& [c, colour] : category_colours) {
    if (c == *known) return colour;
  }
  return unknown_category_colour;
}

std::string category_swatch_html(std::string_view category) {
  return fmt::format("<svg class=\"swatch\" width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" "
                     "height=\"12\" fill=\"{}\"/></svg>",
                     category_colour(category));
}

std::string age_text(std::string_view created_at, timestamp now) {
  const auto created = parse_rfc3339(created_at);
  if (!created) return "unknown";
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(now - *created).count();
  if (minutes < 0) return "0 min";
  if (minutes < 60) return fmt::format("{} min", minutes);
  if (minutes < 24 * 60) return fmt::format("{} h {} min", minutes / 60, minutes % 60);
  return fmt::format("{} d {} h", minutes / (24 * 60), minutes / 60 % 24);
}

std::string counts_tables_html(const dlq_overview& overview, timestamp now) {
  const auto& s = overview.statistics;
  std::string out = fmt::format("<p class=\"summary\"><strong>{}</strong> {}; oldest pending: {}</p>", s.total,
                                s.total == 1 ? "dead letter" : "dead letters",
                                s.oldest_pending_created_at
                                    ? html_escape(age_text(format_rfc3339(*s.oldest_pending_created_at), now)) +
                                          " old (" + html_escape(format_rfc3339(*s.oldest_pending_created_at)) + ")"
                                    : std::string("none pending"));
  out += "<div class=\"tables\">";
  out += count_table("by status", s.by_status);
  out += count_table("by category", s.by_category, /*swatches=*/true);
  out += count_table("by triage", s.by_triage);
  out += count_table("by failure_code", s.by_code);
  out += "</div>";
  if (const auto& u = overview.unreadable; u.count > 0) {
    out += fmt::format("<table class=\"counts unreadable\"><caption>{} unreadable (they do not read back; counted "
                       "above by what their columns say)</caption><thead><tr><th>dlq_id</th><th>why</th></tr></thead>"
                       "<tbody>",
                       u.count);
    for (const auto& r : u.records) {
      out += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>", html_escape(r.dlq_id), html_escape(r.reason));
    }
    if (u.count > u.records.size()) {
      out += fmt::format("<tr><td colspan=\"2\">and {} more</td></tr>", u.count - u.records.size());
    }
    out += "</tbody></table>";
  }
  return out;
}

std::string timeline_chart_svg(const std::vector<dlq_timeline_bucket>& timeline) {
  if (timeline.empty()) return "<p class=\"empty-chart\">No dead letters in this period.</p>";
  std::set<std::string> categories;
  std::uint64_t highest = 0;
  for (const auto& bucket : timeline) {
    std::uint64_t day_total = 0;
    for (const auto& [category, count] : bucket.dead_letters_by_category) {
      categories.insert(category);
      day_total += count;
    }
    highest = std::max(highest, day_total);
  }
  // Four gridlines a round whole number apart.
  const double top = 4 * axis_top(static_cast<double>(highest) / 4);
  const double slot = static_cast<double>(chart_width - margin_left) / static_cast<double>(timeline.size());
  const double plot_height = chart_height - margin_top - margin_bottom;

  std::string out = svg_open("Dead letters per day by category");
  out += axes(top, "", timeline, slot);
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    double y = margin_top + plot_height;
    for (const auto& [category, count] : timeline[i].dead_letters_by_category) {
      const double h = plot_height * static_cast<double>(count) / top;
      y -= h;
      out += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                         "fill=\"{}\"><title>{} {}: {}</title></rect>",
                         margin_left + slot * i + slot * 0.1, y, slot * 0.8, h, category_colour(category),
                         html_escape(day_of(timeline[i])), html_escape(category), count);
    }
  }
  out += "</svg><ul class=\"legend\">";
  for (const auto& category : categories) {
    out += fmt::format("<li>{} {}</li>", category_swatch_html(category), html_escape(category));
  }
  return out + "</ul>";
}

std::string dlq_rate_chart_svg(const std::vector<dlq_timeline_bucket>& timeline) {
  const bool counted = std::any_of(timeline.begin(), timeline.end(), [](const auto& b) { return b.processed > 0; });
  if (!counted) return "<p class=\"empty-chart\">The store counts no processed responses: no DLQ rate to show.</p>";
  std::vector<std::optional<double>> rate;
  double highest = 0;
  for (const auto& bucket : timeline) {
    if (bucket.processed == 0) {
      rate.emplace_back();
      continue;
    }
    rate.push_back(100.0 * static_cast<double>(bucket.dead_letters()) / static_cast<double>(bucket.processed));
    highest = std::max(highest, *rate.back());
  }
  // The alarm's default threshold, drawn so that a day above it stands out.
  const double threshold = 100.0 * dlq_rate_alarm_options{}.threshold;
  const double top = axis_top(std::max(highest, 1.25 * threshold));
  const double slot = static_cast<double>(chart_width - margin_left) / static_cast<double>(timeline.size());
  const double plot_height = chart_height - margin_top - margin_bottom;
  constexpr std::string_view rate_label = "DLQ rate: dead letters per processed response";
  std::string out = svg_open("DLQ rate per day");
  out += axes(top, "%", timeline, slot);
  const double threshold_y = margin_top + plot_height * (1 - threshold / top);
  const std::string threshold_label = fmt::format("alarm threshold {:g}%", threshold);
  out += fmt::format("<line class=\"threshold\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"><title>{}</title>"
                     "</line><text class=\"line-label threshold-label\" x=\"{}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}</text>",
                     margin_left, chart_width, threshold_y, threshold_y, threshold_label, chart_width - 4,
                     threshold_y - 4, threshold_label);
  std::string points;
  for (std::size_t i = 0; i < rate.size(); ++i) {
    if (!rate[i]) continue;
    const double x = margin_left + slot * (i + 0.5);
    const double y = margin_top + plot_height * (1 - *rate[i] / top);
    points += fmt::format("{:.1f},{:.1f} ", x, y);
    out += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{}: {:.2f}% of {}"
                       "</title></circle>",
                       x, y, html_escape(day_of(timeline[i])), *rate[i], timeline[i].processed);
  }
  out += fmt::format("<polyline class=\"rate\" fill=\"none\" points=\"{}\"><title>{}</title></polyline>", points,
                     rate_label);
  out += "</svg><ul class=\"legend\">";
  for (const auto& [line_class, label] : {std::pair{"rate", std::string(rate_label)}, {"threshold", threshold_label}}) {
    out += fmt::format("<li><svg width=\"24\" height=\"12\" aria-hidden=\"true\"><line class=\"{}\" x1=\"0\" "
                       "y1=\"6\" x2=\"24\" y2=\"6\"/></svg> {}</li>",
                       line_class, label);
  }
  return out + "</ul>";
}

}  // namespace llmdlq::cli
