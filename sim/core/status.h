// Status and StatusOr<T>: errors from configuration, traces and the command line travel as values up to
// main(), which prints the message on one line and exits with code 2. No exceptions cross actor code.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace sim {

class Status {
 public:
  Status() = default;  // OK
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !message_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  // REQUIRES: !is_ok().
  const std::string& message() const { return *message_; }

 private:
  explicit Status(std::string m) : message_(std::move(m)) {}
  std::optional<std::string> message_;
};

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT; REQUIRES: !status.is_ok()

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: is_ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace sim

// Returns early from the enclosing function when `expr` (a Status) is an error.
#define SIM_RETURN_IF_ERROR(expr)         \
  do {                                    \
    ::sim::Status sim_status_ = (expr);   \
    if (!sim_status_) return sim_status_; \
  } while (0)
