#pragma once
// A small value-or-error type: core reports failures as values, never by exit() or by
// throwing across its API, so the CLI, the GUI and the executor can each word them their way.
#include <string>
#include <utility>
#include <variant>

namespace mario {

struct Error {
    std::string message;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::move(value)) {}
    Result(Error error) : state_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(state_); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(state_); }
    const T& value() const& { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const Error& error() const { return std::get<Error>(state_); }

    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

private:
    std::variant<T, Error> state_;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

}  // namespace mario
