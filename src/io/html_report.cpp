#include "io/html_report.h"

#include <fmt/format.h>

#include <stdexcept>

#include "io/chart_library.h"
#include "util/input_error.h"

namespace phaze::io {

/// The report's own script (src/io/html_report.js), compiled in as the chart library is.
const std::string& report_script_js();

namespace {

/// JSON safe inside <script>: every "<" written as \u003c, so that no "</script" or "<!--" can occur in it.
std::string json_in_script(const nlohmann::json& value) {
  std::string out;
  for (const char c : value.dump()) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

/// Code placed inside <script> as it is: it must not end the element early nor open an HTML comment there.
const std::string& script_code(const std::string& code, const char* what) {
  if (code.find("</script") != std::string::npos || code.find("<!--") != std::string::npos)
    throw std::logic_error(fmt::format("report: {} holds text that would end its <script> element", what));
  return code;
}

std::string html_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin: 28px 0 4px; }
p.note { color: #555; margin: 0 0 8px; }
table { border-collapse: collapse; margin: 12px 0; }
th, td { text-align: left; padding: 3px 14px 3px 0; vertical-align: top; }
th { color: #555; font-weight: 600; }
.chart { position: relative; height: 380px; }
footer { color: #777; margin-top: 32px; font-size: 12px; }
)";

}  // namespace

const char* report_kind_name(ReportKind kind) {
  switch (kind) {
    case ReportKind::Search: return "search";
    case ReportKind::Predict: return "predict";
    case ReportKind::Plan: return "plan";
  }
  return "search";
}

ReportKind report_kind(const nlohmann::json& a, const std::string& source) {
  if (a.is_object() && a.contains("search") && a.contains("best") && a.contains("baselines")) return ReportKind::Search;
  if (a.is_object() && a.contains("iteration_time_s") && a.contains("breakdown") && a.contains("memory"))
    return ReportKind::Predict;
  if (a.is_object() && a.contains("best") && a["best"].is_array() && a.contains("evaluated")) return ReportKind::Plan;
  throw InputError(
      fmt::format("{}: not an answer of phaze search, predict or plan (their JSON, from -o or --json)", source));
}

std::string html_report(const nlohmann::json& answer, ReportKind kind, const std::vector<nlohmann::json>& traces,
                        const std::string& title) {
  if (chart_library_js().empty())
    throw InputError("report: this phaze was built without Chart.js (Debian's libjs-chart.js); install it and rebuild");
  nlohmann::json trace_list = nlohmann::json::array();
  for (const nlohmann::json& t : traces) trace_list.push_back(t);
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += fmt::format("<title>{}</title>\n<style>{}</style>\n", html_escaped(title), kStyle);
  page += "<script>\n" + script_code(chart_library_js(), "Chart.js") + "\n</script>\n</head>\n<body>\n";
  page += fmt::format("<h1>{}</h1>\n<div id=\"summary\"></div>\n<main id=\"charts\"></main>\n", html_escaped(title));
  page += fmt::format("<script id=\"phaze-answer\" type=\"application/json\" data-kind=\"{}\">{}</script>\n",
                      report_kind_name(kind), json_in_script(answer));
  page +=
      fmt::format("<script id=\"phaze-traces\" type=\"application/json\">{}</script>\n", json_in_script(trace_list));
  page += "<script>\n" + script_code(report_script_js(), "the report's script") + "\n</script>\n";
  page += "<footer>Made by phaze; charts by Chart.js (MIT licence), carried in this page.</footer>\n";
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace phaze::io
