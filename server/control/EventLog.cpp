#include "control/EventLog.h"

#include "region/Clock.h"
#include "region/RegionLayout.h"

#include <QJsonObject>
#include <cstring>

namespace taxicore {

void EventLog::append(const char *kind, const QString &text)
{
    const uint64_t sequence = m_control.nextEvent.fetch_add(1, std::memory_order_relaxed) + 1;
    EventSlot &slot = m_control.events[sequence % kEventSlots];
    slot.sequence.store(0, std::memory_order_release); // readers skip it while it is rewritten
    slot.timeMs = clock::wallMs();
    std::strncpy(slot.kind, kind, sizeof slot.kind - 1);
    slot.kind[sizeof slot.kind - 1] = 0;
    const QByteArray utf8 = text.toUtf8().left(kEventTextBytes - 1);
    std::memcpy(slot.text, utf8.constData(), std::size_t(utf8.size()));
    slot.text[utf8.size()] = 0;
    slot.sequence.store(sequence, std::memory_order_release);
}

QJsonArray EventLog::newest(int max) const
{
    QJsonArray out;
    const uint64_t last = m_control.nextEvent.load(std::memory_order_acquire);
    for (uint64_t s = last; s > 0 && out.size() < max && last - s < uint64_t(kEventSlots); --s) {
        const EventSlot &slot = m_control.events[s % kEventSlots];
        if (slot.sequence.load(std::memory_order_acquire) != s)
            continue;
        out.append(QJsonObject{{QStringLiteral("seq"), qint64(s)},
                               {QStringLiteral("time_ms"), qint64(slot.timeMs)},
                               {QStringLiteral("kind"), QString::fromUtf8(slot.kind)},
                               {QStringLiteral("text"), QString::fromUtf8(slot.text)}});
    }
    return out;
}

} // namespace taxicore
