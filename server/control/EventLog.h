#pragma once

#include <QJsonArray>
#include <QString>

namespace taxicore {

struct ControlBlock;

// The run's event log in the shared region: any process appends (mode switches, worker
// crashes, respawns, benchmark runs), anyone reads the newest entries.
class EventLog {
public:
    explicit EventLog(ControlBlock &control)
        : m_control(control)
    {
    }
    void append(const char *kind, const QString &text);
    // Newest first, at most `max`: [{seq, time_ms, kind, text}].
    QJsonArray newest(int max) const;

private:
    ControlBlock &m_control;
};

} // namespace taxicore
