#include "Scenario.h"

#include "TaxiPlan.h"

namespace taxicore::bench {

std::shared_ptr<const RequestPlan> Scenario::makePlan(const RequestRenderer &renderer,
                                                      const std::string &deviceToken) const
{
    switch (requests) {
    case Requests::TaxiMix:
        return std::make_shared<TaxiPlan>(TaxiPlan::Style::Mix, renderer, TaxiMixWeights{}, deviceToken);
    case Requests::SiegeTaxi:
        return std::make_shared<TaxiPlan>(TaxiPlan::Style::SiegeCycle, renderer, TaxiMixWeights{}, deviceToken);
    case Requests::Mix:
        break;
    }
    return std::make_shared<WeightedMixPlan>(mix, renderer);
}

} // namespace taxicore::bench
