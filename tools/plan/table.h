// A small text table: aligned columns for people, CSV for tools.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tcgemm::plan_cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

  // A row of cells, one per header (missing cells print empty).
  void add(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  // Columns padded to their widest cell, numbers right-aligned, text left.
  void print(std::ostream& out) const;

  // RFC 4180: cells with a comma, quote or newline are quoted.
  void print_csv(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tcgemm::plan_cli
