#include "report/web_assets.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "report/web/figures_js.h"

namespace nmsparse::report {

absl::StatusOr<std::string> ReadPlotlyJs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (text.str().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read plotly.js at ", path, ": install Debian's python3-plotly (tools/bootstrap.sh)"));
  }
  return text.str();
}

const std::string& FiguresJs() {
  static const std::string* const text = new std::string(kFiguresJsText);
  return *text;
}

const std::string& AssetVersion() {
  static const std::string* const version = new std::string(
      absl::StrCat("?v=", absl::Hex(std::hash<std::string>()(absl::StrCat(FiguresJs(), kPlotlyJsPath)))));
  return *version;
}

std::string FigureScripts(const std::string& script_safe_json, const std::string& script_base,
                          const std::string& query) {
  // script_base and query are our own; the JSON cannot close its element (ScriptSafeJsonText).
  return absl::StrCat("<script id=\"nm-figures\" type=\"application/json\">", script_safe_json,
                      "</script>\n<script src=\"", script_base, "plotly.js", query,
                      "\"></script>\n<script src=\"", script_base, "figures.js", query, "\"></script>\n");
}

}  // namespace nmsparse::report
