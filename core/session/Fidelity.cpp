#include "core/session/Fidelity.h"

namespace mario {

double simulationError(double simulated, double measured) {
    return measured > 0 ? (simulated - measured) / measured : 0.0;
}

}  // namespace mario
