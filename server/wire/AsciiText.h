#pragma once

#include <QByteArrayView>

namespace taxicore {

// Header text is ASCII and its comparisons ignore case by the ASCII rules, whatever the locale:
// one set of helpers for the request reader, the content negotiation and the Host check.

inline char lowerAscii(char c)
{
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

// Equal but for ASCII case.
inline bool equalsIgnoringAsciiCase(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i)
        if (lowerAscii(a[i]) != lowerAscii(b[i]))
            return false;
    return true;
}

// Optional whitespace around a field value or a list element (RFC 9110 §5.6.3): spaces and tabs.
inline bool isOptionalWhitespace(char c)
{
    return c == ' ' || c == '\t';
}

inline QByteArrayView trimmedOfOptionalWhitespace(QByteArrayView value)
{
    qsizetype begin = 0;
    qsizetype end = value.size();
    while (begin < end && isOptionalWhitespace(value[begin]))
        ++begin;
    while (end > begin && isOptionalWhitespace(value[end - 1]))
        --end;
    return value.sliced(begin, end - begin);
}

} // namespace taxicore
