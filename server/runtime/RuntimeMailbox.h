#pragma once

#include "runtime/RuntimeSettings.h"

#include <QString>
#include <optional>

namespace taxicore {

struct ControlBlock;

// How any process asks the primary to change the runtime settings: the request goes into the
// control block, the primary's control thread applies it and answers there. Asking blocks the
// caller for at most the timeout; the primary never waits on an asker.
class RuntimeMailbox {
public:
    explicit RuntimeMailbox(ControlBlock &control)
        : m_control(control)
    {
    }

    // The settings in force now, as the primary published them.
    RuntimeSettings current() const;
    void publish(const RuntimeSettings &settings);

    struct Answer {
        bool answered = false;
        QString error; // empty: applied
    };
    Answer ask(const RuntimeSettings &wanted, int timeoutMs) const;

    // Primary side: a request not yet answered, if any.
    std::optional<RuntimeSettings> pending() const;
    void answer(const QString &error);

private:
    ControlBlock &m_control;
};

} // namespace taxicore
