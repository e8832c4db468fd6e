#pragma once

#include "control/RuntimeSettings.h"

#include <QString>
#include <cstdint>
#include <optional>

namespace taxicore {

struct ControlBlock;

// How any process asks the primary to change the runtime settings: the request goes into the
// control block, the primary's control thread applies it and answers there. The mailbox holds one
// change at a time: from the moment a request is written until its asker has read the answer,
// every other asker is told the slot is busy (HTTP 409 switch_in_progress), so no answer ever
// describes somebody else's change. Asking blocks the caller for at most the timeout; the
// primary never waits on an asker.
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
        bool busy = false;       // another change is being applied: nothing was asked
        bool answered = false;   // the primary answered within the timeout
        QString error;           // empty: applied
        RuntimeSettings applied; // what this request put in force (when answered without error)
        uint32_t generation = 0; // the settings' generation right after this request was applied
    };
    Answer ask(const RuntimeSettings &wanted, int timeoutMs) const;

    // Primary side: the request not yet answered, if any, and its sequence number for answer().
    struct Request {
        uint64_t sequence = 0;
        RuntimeSettings settings;
    };
    std::optional<Request> pending() const;
    // `applied`: the settings in force after handling request `sequence` (unchanged on an error).
    void answer(uint64_t sequence, const QString &error, const RuntimeSettings &applied);

private:
    ControlBlock &m_control;
};

} // namespace taxicore
