// Arithmetic on sizes derived from input (file headers, shapes, sweep products): every product
// and sum is checked, so that an absurd input is refused with its numbers instead of wrapping to
// a small size that is then allocated and written past.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace simprec::limits {

template <class T>
requires std::is_integral_v<T> std::optional<T> checked_mul(T a, T b) {
  T result;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

template <class T>
requires std::is_integral_v<T> std::optional<T> checked_add(T a, T b) {
  T result;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// "a x b x c" for messages.
template <class T>
std::string product_text(std::span<const T> factors) {
  std::string text;
  for (const T f : factors) text += (text.empty() ? "" : " x ") + std::to_string(f);
  return text.empty() ? "1" : text;
}

// The product of `factors`, each at least 0; throws std::invalid_argument naming `what` and the
// factors when it does not fit in T (or a factor is negative).
template <class T>
requires std::is_integral_v<T> T checked_product(std::span<const T> factors,
                                                 const std::string& what) {
  T product = 1;
  for (const T f : factors) {
    if constexpr (std::is_signed_v<T>) {
      if (f < 0) {
        throw std::invalid_argument(what + ": negative size " + std::to_string(f) + " in " +
                                    product_text(factors));
      }
    }
    const auto next = checked_mul(product, f);
    if (!next) {
      throw std::invalid_argument(what + ": " + product_text(factors) + " does not fit in " +
                                  std::to_string(sizeof(T) * 8) + "-bit integers");
    }
    product = *next;
  }
  return product;
}

template <class T>
requires std::is_integral_v<T> T checked_product(std::initializer_list<T> factors,
                                                 const std::string& what) {
  return checked_product(std::span<const T>(factors.begin(), factors.size()), what);
}

}  // namespace simprec::limits
