// Validators for tcgemm-bench's numeric options. CLI11 2.1's own conversion
// (strtoll/strtoull with base 0, strtold) reads "010" as octal, saturates
// out-of-range integers (so "-1" and 2^64 become 2^64 - 1 for an unsigned),
// and lets "nan", "inf" and 1e39 (too large for a float) through. These
// validators check the text with std::from_chars instead, say what is wrong
// in one line, and hand CLI11 a canonical decimal that it converts to exactly
// the checked value.
#pragma once

#include <CLI/CLI.hpp>
#include <array>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace tcgemm::bench {

namespace cli_detail {

// from_chars takes no leading '+'; accept one, as strtol does.
inline std::string_view without_plus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  return text;
}

}  // namespace cli_detail

// A decimal integer in [min, max]. Messages (CLI11 prefixes the option
// name): "'abc' is not an integer", "must be >= 1, got 0",
// "must be <= 18446744073709551615, got 18446744073709551616".
template <std::integral T>
CLI::Validator integer_in(T min, T max, std::string description = {}) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        const std::string_view text = cli_detail::without_plus(input);
        const char* const last = text.data() + text.size();
        const bool negative = text.starts_with('-');
        T value{};
        std::from_chars_result read = std::from_chars(text.data(), last, value);
        if constexpr (std::is_unsigned_v<T>) {
          // from_chars reads no sign into an unsigned T, but "-5" is still an
          // integer, one below the range.
          if (read.ec == std::errc::invalid_argument && negative) {
            T magnitude{};
            read = std::from_chars(text.data() + 1, last, magnitude);
            if (read.ec != std::errc::invalid_argument) read.ec = std::errc::result_out_of_range;
          }
        }
        if (read.ec == std::errc::invalid_argument || read.ptr != last) {
          return "'" + input + "' is not an integer";
        }
        const bool out_of_t = read.ec == std::errc::result_out_of_range;
        if (out_of_t ? negative : value < min) {
          return "must be >= " + std::to_string(min) + ", got " + input;
        }
        if (out_of_t || value > max) return "must be <= " + std::to_string(max) + ", got " + input;
        input = std::to_string(value);
        return {};
      },
      std::move(description));
}

// An integer from min up (to the largest T).
template <std::integral T>
CLI::Validator integer_from(T min, std::string description = {}) {
  return integer_in(min, std::numeric_limits<T>::max(), std::move(description));
}

// A finite number that a float holds (0 or a magnitude from the smallest
// subnormal to FLT_MAX). Messages: "'abc' is not a number", "must be finite,
// got nan", "1e39 does not fit in a float (...)".
inline CLI::Validator finite_float() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const std::string_view text = cli_detail::without_plus(input);
        const char* const last = text.data() + text.size();
        float value = 0.0f;
        const auto [end, ec] = std::from_chars(text.data(), last, value);
        if (ec == std::errc::invalid_argument || end != last) {
          return "'" + input + "' is not a number";
        }
        if (ec == std::errc::result_out_of_range) {
          return input + " does not fit in a float (nonzero magnitudes from 1.4e-45 to 3.4e+38)";
        }
        if (!std::isfinite(value)) return "must be finite, got " + input;
        // The shortest text that reads back as this float.
        std::array<char, 32> buffer{};
        const std::to_chars_result written =
            std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
        input.assign(buffer.data(), written.ptr);
        return {};
      },
      "FINITE");
}

// After finite_float (which leaves the input a number): a value above 0, or
// (inclusive) at least 0. Messages: "must be positive, got 0", "must be 0
// or more, got -1" (CLI11's PositiveNumber says "not in range 0 to 1.8e308",
// which reads as if 0 were allowed).
inline CLI::Validator above_zero(bool or_zero = false) {
  return CLI::Validator(
      [or_zero](std::string& input) -> std::string {
        const double value = std::strtod(input.c_str(), nullptr);
        if (or_zero ? value >= 0.0 : value > 0.0) return {};
        return std::string(or_zero ? "must be 0 or more" : "must be positive") + ", got " + input;
      },
      or_zero ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace tcgemm::bench
