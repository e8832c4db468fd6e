#pragma once

#include <QByteArray>

namespace taxicore::feedprobe {

// Which live-feed message a text frame is, from its first bytes, before any JSON parse: the
// server writes `{"type":"follow"` and `{"type":"update"` first (server/http/LiveFeed.cpp), so
// the 4,000 nearby updates a second can be skipped without being parsed. Anything else is
// Other, for the caller to parse in full.
enum class FeedMessageKind { Follow, Update, Other };

FeedMessageKind feedMessageKind(const QByteArray &text);

} // namespace taxicore::feedprobe
