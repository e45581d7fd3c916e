#include "collectives/trafficpattern.h"

namespace railyard::engine {

const char *toString(PhaseKind kind)
{
    switch (kind) {
    case PhaseKind::Compute: return "compute";
    case PhaseKind::Tp: return "tp";
    case PhaseKind::Cp: return "cp";
    case PhaseKind::Ep: return "ep";
    case PhaseKind::PpP2p: return "pp_p2p";
    case PhaseKind::Dp: return "dp";
    case PhaseKind::Optimizer: return "optimizer";
    case PhaseKind::Bubble: return "bubble";
    }
    return "compute";
}

} // namespace railyard::engine
