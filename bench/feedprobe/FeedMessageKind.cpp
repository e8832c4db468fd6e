#include "FeedMessageKind.h"

namespace taxicore::feedprobe {

FeedMessageKind feedMessageKind(const QByteArray &text)
{
    // With the closing quote: a type "followed" or "updates" is not one of these.
    if (text.startsWith("{\"type\":\"follow\""))
        return FeedMessageKind::Follow;
    if (text.startsWith("{\"type\":\"update\""))
        return FeedMessageKind::Update;
    return FeedMessageKind::Other;
}

} // namespace taxicore::feedprobe
