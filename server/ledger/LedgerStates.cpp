#include "ledger/LedgerStates.h"

namespace taxicore {

int ledgerStateRank(QStringView state)
{
    if (state == u"requested")
        return 0;
    if (state == u"assigned")
        return 1;
    if (state == u"arriving")
        return 2;
    if (state == u"on_trip")
        return 3;
    if (state == u"completed" || state == u"cancelled" || state == u"expired")
        return 4;
    return -1;
}

bool ledgerStateIsOpen(QStringView state)
{
    const int rank = ledgerStateRank(state);
    return rank >= 0 && rank < 4;
}

} // namespace taxicore
