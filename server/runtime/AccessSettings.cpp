#include "runtime/AccessSettings.h"

#include <QRandomGenerator>
#include <algorithm>
#include <cstring>

namespace taxicore {

void publishAccessSettings(AccessBlock &block, const AccessSettings &settings)
{
    std::memset(block.adminToken, 0, sizeof block.adminToken);
    const QByteArray token = settings.adminToken.left(kAdminTokenBytes - 1);
    std::memcpy(block.adminToken, token.constData(), std::size_t(token.size()));
    std::memset(block.deviceToken, 0, sizeof block.deviceToken);
    const QByteArray device = settings.deviceToken.left(kAdminTokenBytes - 1);
    std::memcpy(block.deviceToken, device.constData(), std::size_t(device.size()));
    block.trustLoopback = settings.trustLoopback ? 1 : 0;
    block.bookingRatePerMinute = settings.bookingRatePerMinute;
    block.bookingBurst = settings.bookingBurst;
    block.openBookingsPerClient = uint32_t(std::clamp(settings.openBookingsPerClient, 0, kMaxOpenBookingsPerClient));
    // Once per region: a new seed would lose every address already counted (http/ConnectionsPerClient).
    if (block.connectionsSeed == 0)
        block.connectionsSeed = QRandomGenerator::system()->generate64() | 1;
}

AccessSettings readAccessSettings(const AccessBlock &block)
{
    AccessSettings settings;
    settings.adminToken = QByteArray(block.adminToken, qsizetype(strnlen(block.adminToken, kAdminTokenBytes)));
    settings.deviceToken = QByteArray(block.deviceToken, qsizetype(strnlen(block.deviceToken, kAdminTokenBytes)));
    settings.trustLoopback = block.trustLoopback != 0;
    settings.bookingRatePerMinute = block.bookingRatePerMinute;
    settings.bookingBurst = block.bookingBurst;
    settings.openBookingsPerClient = int(block.openBookingsPerClient);
    return settings;
}

} // namespace taxicore
