#include "step/offload.h"

#include <algorithm>

namespace railyard::engine {

int offloadedLayers(const TrainingConfig &t, int pp, int layers)
{
    if (t.offloadLayers <= 0 || pp != 1 || t.recompute != Recompute::None || layers < 2)
        return 0;
    return std::min(t.offloadLayers, layers - 1);
}

std::vector<int> offloadWindows(int layers, int offloaded)
{
    // cpu_offload.py (TE v2.9, AsyncDoubleBufferGroupOffloadHandler.__init__): the groups are
    // spread evenly, the first (layers % offloaded) of them one layer wider.
    std::vector<int> window;
    if (offloaded <= 0 || layers <= 0)
        return window;
    const int base = layers / offloaded, extra = layers % offloaded;
    window.resize(static_cast<std::size_t>(offloaded));
    int constant = 0;
    for (int i = 0; i < offloaded; ++i) {
        int w = base * (i + 1) - 1;
        if (i < extra) {
            w += i + 1;
            constant = i + 1;
        } else {
            w += constant;
        }
        window[static_cast<std::size_t>(i)] = std::min(w, layers - 1);
    }
    return window;
}

double offloadResidentLayers(int layers, int offloaded)
{
    if (offloaded <= 0)
        return layers;
    const std::vector<int> window = offloadWindows(layers, offloaded);
    // Forward: group c's memory is freed at the end of layer window[c], after its copy; just
    // before the last group is freed (window = the last layer) every kept layer and that group
    // are held.
    int peak = layers - offloaded + 1;
    // Backward, before layer l's: the kept layers not yet run back (offloaded .. l) and the
    // groups reloaded (from window[j]) whose layer j has not run back yet.
    for (int l = layers - 1; l >= 0; --l) {
        int held = std::max(0, l - offloaded + 1);
        for (int j = 0; j < offloaded; ++j)
            if (j <= l && l <= window[static_cast<std::size_t>(j)])
                ++held;
        peak = std::max(peak, held);
    }
    return peak;
}

OffloadStall offloadStall(int layers,
                          int offloaded,
                          double d2hS,
                          double h2dS,
                          double layerForwardS,
                          double layerBackwardS)
{
    OffloadStall s;
    const std::vector<int> window = offloadWindows(layers, offloaded);
    for (std::size_t c = 0; c < window.size(); ++c) {
        // Group 0's copy starts when layer 0 ends; group c's when the compute passes
        // window[c - 1]. The backward's reloads run the same windows in reverse.
        const int span = c == 0 ? window[0] : window[c] - window[c - 1];
        s.forwardS += std::max(0.0, d2hS - span * layerForwardS);
        s.backwardS += std::max(0.0, h2dS - span * layerBackwardS);
    }
    return s;
}

} // namespace railyard::engine
