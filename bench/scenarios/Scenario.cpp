#include "Scenario.h"

#include "TaxiPlan.h"

namespace taxicore::bench {

std::shared_ptr<const RequestPlan> Scenario::makePlan(const RequestRenderer &renderer) const {
    switch (requests) {
    case Requests::TaxiMix:
        return std::make_shared<TaxiPlan>(TaxiPlan::Style::Mix, renderer);
    case Requests::SiegeTaxi:
        return std::make_shared<TaxiPlan>(TaxiPlan::Style::SiegeCycle, renderer);
    case Requests::Mix:
        break;
    }
    return std::make_shared<WeightedMixPlan>(mix, renderer);
}

} // namespace taxicore::bench
