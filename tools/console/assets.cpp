// SPDX-License-Identifier: MIT
#include "assets.hpp"

namespace llmdlq::cli {

const std::string_view console_stylesheet = R"css(
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { background: #23303d; color: #fff; padding: .6em 1.2em; display: flex; gap: 1.5em; align-items: center; }
header a { color: #fff; }
header .who { margin-left: auto; }
main { padding: 1em 1.5em; max-width: 1400px; }
table { border-collapse: collapse; margin: .5em 0 1em; background: #fff; }
th, td { border: 1px solid #d0d4d9; padding: .25em .6em; text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.queue td { white-space: nowrap; }
table.queue td:first-child { font-family: ui-monospace, monospace; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: .2em 0; }
.tables { display: flex; flex-wrap: wrap; gap: 1.5em; }
pre { background: #fff; border: 1px solid #d0d4d9; padding: .7em; overflow: auto; white-space: pre-wrap; word-break: break-all; }
mark { background: #ffd54f; outline: 2px solid #d55e00; }
.error, .refused { color: #a4000f; }
.refused { border: 1px solid #a4000f; background: #fff0f0; padding: .5em .8em; }
.notice { border: 1px solid #0072b2; background: #eef6fc; padding: .5em .8em; }
form.inline { display: inline-block; margin-right: .6em; }
form.filters label { margin-right: 1em; }
textarea { width: 100%; min-height: 10em; font-family: ui-monospace, monospace; }
.chart { background: #fff; border: 1px solid #d0d4d9; max-width: 100%; height: auto; }
.chart .grid { stroke: #e3e6ea; }
.chart .tick { font-size: 11px; fill: #555; }
.chart .rate, .legend .rate { stroke: #0072b2; stroke-width: 2; }
.chart .point { fill: #0072b2; }
.chart .threshold, .legend .threshold { stroke: #d55e00; stroke-dasharray: 5 4; }
.chart .line-label { font-size: 11px; }
.chart .threshold-label { fill: #d55e00; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1em; }
.sealed { font-style: italic; color: #555; }
)css";

const std::string_view console_script = R"js('use strict';
document.addEventListener('DOMContentLoaded', function () {
  var filters = document.querySelector('form.filters');
  if (!filters) return;
  filters.querySelectorAll('select').forEach(function (select) {
    select.addEventListener('change', function () { filters.submit(); });
  });
});
)js";

}  // namespace llmdlq::cli
