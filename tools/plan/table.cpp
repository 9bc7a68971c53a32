#include "table.h"

#include <algorithm>
#include <cstddef>

namespace tcgemm::plan_cli {
namespace {

bool numeric(const std::string& cell) {
  return !cell.empty() && cell.find_first_not_of("0123456789.-+x") == std::string::npos &&
         cell.find_first_of("0123456789") != std::string::npos;
}

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char ch : cell) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  const auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string text;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      const std::string pad(width[c] - cell.size(), ' ');
      const bool right = !header && numeric(cell);
      if (c > 0) text += "  ";
      text += right ? pad + cell : cell + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(headers_, true);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule, true);
  for (const auto& row : rows_) line(row, false);
}

void Table::print_csv(std::ostream& out) const {
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < headers_.size(); ++c) {
      if (c > 0) out << ',';
      if (c < cells.size()) out << csv_cell(cells[c]);
    }
    out << '\n';
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
}

}  // namespace tcgemm::plan_cli
