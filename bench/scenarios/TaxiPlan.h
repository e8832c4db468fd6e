#pragma once

#include "../engine/RequestPlan.h"
#include "../engine/RequestRenderer.h"
#include "TaxiMixSource.h"
#include "TaxiRequests.h"

namespace taxicore::bench {

// The plan behind the taxi scenarios: one stateful source per connection, each with its own
// rider id (r1, r2, ...).
class TaxiPlan : public RequestPlan {
public:
    enum class Style { Mix, SiegeCycle };

    TaxiPlan(Style style, RequestRenderer renderer, TaxiMixWeights weights = {}, std::string deviceToken = {});
    // Sources and m_requests point into the plan: it must stay where it was made.
    TaxiPlan(const TaxiPlan &) = delete;
    TaxiPlan &operator=(const TaxiPlan &) = delete;

    std::unique_ptr<RequestSource> makeSource(uint32_t connectionIndex) const override;
    std::string describe() const override;
    std::vector<std::string> kindNames() const override;

private:
    Style m_style;
    RequestRenderer m_renderer;
    TaxiRequests m_requests;
    TaxiMixWeights m_weights;
};

} // namespace taxicore::bench
