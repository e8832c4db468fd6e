#include "TaxiPlan.h"

#include "SiegeTaxiSource.h"

namespace taxicore::bench {

TaxiPlan::TaxiPlan(Style style, RequestRenderer renderer, TaxiMixWeights weights, std::string deviceToken)
    : m_style(style)
    , m_renderer(std::move(renderer))
    , m_requests(m_renderer, std::move(deviceToken))
    , m_weights(weights)
{
}

std::unique_ptr<RequestSource> TaxiPlan::makeSource(uint32_t connectionIndex) const
{
    std::string riderId = "r" + std::to_string(connectionIndex + 1);
    if (m_style == Style::SiegeCycle)
        return std::make_unique<SiegeTaxiSource>(m_requests, std::move(riderId));
    return std::make_unique<TaxiMixSource>(m_requests, std::move(riderId), m_weights);
}

std::string TaxiPlan::describe() const
{
    if (m_style == Style::SiegeCycle)
        return "taxi calls in turn: PUT position, GET nearby, POST booking, GET booking";
    return "taxi mix: position " + std::to_string(static_cast<int>(m_weights.positionUpdate)) + ", nearby "
           + std::to_string(static_cast<int>(m_weights.nearby)) + ", quote "
           + std::to_string(static_cast<int>(m_weights.quote)) + ", booking flow "
           + std::to_string(static_cast<int>(m_weights.book));
}

std::vector<std::string> TaxiPlan::kindNames() const
{
    // In the order of TaxiMixSource::Step.
    return {"PUT position", "GET nearby",  "GET quote",     "POST booking",
            "GET booking",  "POST pickup", "POST complete", "POST cancel"};
}

} // namespace taxicore::bench
