#pragma once

#include <QString>

namespace taxicore {

// A value, or a message saying (with the file name) why there is none.
template <typename T> struct LedgerResult {
    T value{};
    QString error;

    bool ok() const { return error.isEmpty(); }
};

} // namespace taxicore
