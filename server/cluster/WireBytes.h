#pragma once

#include <QByteArray>
#include <QString>
#include <QtEndian>
#include <cstring>
#include <type_traits>

namespace taxicore {

// The feed's bytes as QDataStream (Qt_6_4, big-endian, DoublePrecision) lays them out, written and
// read by hand: QDataStream over a QBuffer costs a virtual read per field, which made decoding 80 %
// of what a node spent applying other nodes' moves (2,000 cars five times a second). Same bytes,
// so nodes of one feed version understand each other whichever codec wrote them.
class WireWriter {
public:
    explicit WireWriter(QByteArray &out)
        : m_out(out)
    {
    }

    template <typename Int> void integer(Int value)
    {
        static_assert(std::is_integral_v<Int>);
        char bytes[sizeof(Int)];
        qToBigEndian(value, bytes);
        m_out.append(bytes, sizeof(Int));
    }
    // Floats go as doubles too (DoublePrecision).
    void real(double value)
    {
        quint64 bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        integer(bits);
    }
    void boolean(bool value) { integer(quint8(value ? 1 : 0)); }
    // Size then bytes; a null array as size 0xffffffff.
    void bytes(const QByteArray &value)
    {
        if (value.isNull())
            return integer(kNullSize);
        integer(quint32(value.size()));
        m_out.append(value);
    }
    // Size in bytes then UTF-16 big-endian; a null string as size 0xffffffff.
    void string(const QString &value)
    {
        if (value.isNull())
            return integer(kNullSize);
        integer(quint32(value.size() * 2));
        for (const QChar c : value)
            integer(quint16(c.unicode()));
    }
    void raw(const QByteArray &value) { m_out.append(value); }

    static constexpr quint32 kNullSize = 0xffffffff;

private:
    QByteArray &m_out;
};

// Reads what WireWriter (or QDataStream) wrote. Reading past the end sets !ok() and yields zeros,
// as QDataStream's ReadPastEnd does; every later read fails too.
class WireReader {
public:
    explicit WireReader(const QByteArray &in)
        : m_at(in.constData())
        , m_end(in.constData() + in.size())
    {
    }

    bool ok() const { return m_ok; }
    bool atEnd() const { return m_at == m_end; }
    qsizetype left() const { return m_end - m_at; }
    const char *position() const { return m_at; }

    template <typename Int> Int integer()
    {
        static_assert(std::is_integral_v<Int>);
        if (!take(sizeof(Int)))
            return 0;
        return qFromBigEndian<Int>(m_at - sizeof(Int));
    }
    double real()
    {
        const quint64 bits = integer<quint64>();
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    }
    // Any byte but 0 is true (QDataStream's rule).
    bool boolean() { return integer<quint8>() != 0; }
    QByteArray bytes()
    {
        const quint32 size = integer<quint32>();
        if (!m_ok || size == WireWriter::kNullSize)
            return {};
        if (!take(size))
            return {};
        return QByteArray(m_at - size, qsizetype(size)); // size 0: empty, not null
    }
    QString string()
    {
        const quint32 size = integer<quint32>();
        if (!m_ok || size == WireWriter::kNullSize)
            return {};
        if (size % 2 != 0 || !take(size)) {
            m_ok = false; // an odd size is corrupt
            return {};
        }
        if (size == 0)
            return QString(QLatin1String("")); // empty, not null
        QString value(qsizetype(size / 2), Qt::Uninitialized);
        const char *from = m_at - size;
        QChar *to = value.data();
        for (qsizetype i = 0; i < value.size(); ++i)
            to[i] = QChar(qFromBigEndian<quint16>(from + 2 * i));
        return value;
    }
    // Moves past `size` bytes (false, and !ok(), if there are fewer).
    bool skip(qsizetype size) { return take(size); }

private:
    bool take(qsizetype size)
    {
        if (!m_ok || size < 0 || size > m_end - m_at) {
            m_ok = false;
            m_at = m_end;
            return false;
        }
        m_at += size;
        return true;
    }

    const char *m_at;
    const char *m_end;
    bool m_ok = true;
};

} // namespace taxicore
