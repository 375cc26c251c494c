#pragma once

// Chart.js (Debian's libjs-chart.js, MIT licence), compiled into the library at build time
// (cmake/embed_text.cmake), so that the HTML report carries its charts' code and opens offline.

#include <string>

namespace phaze::io {

/// The minified library's text; empty when the build found none.
const std::string& chart_library_js();

}  // namespace phaze::io
