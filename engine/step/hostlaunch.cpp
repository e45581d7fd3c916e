#include "step/hostlaunch.h"

#include <algorithm>

namespace railyard::engine {

MoeHostTime moeHostTime(const StackProfile &stack,
                        const GpuSpec &gpu,
                        double localExperts,
                        bool fp8,
                        double recomputed)
{
    MoeHostTime h;
    h.localExperts = std::max(1.0, localExperts);
    if (gpu.hostOpS <= 0)
        return h;
    const double experts = h.localExperts;
    const double quantize = fp8 ? stack.expertHostOpsFp8 : 0.0;
    h.beforeWaitS = stack.moeHostOpsBeforeWait * gpu.hostOpS;
    h.afterWaitS = (stack.moeHostOpsAfterWait + experts * (stack.expertHostOpsForward + quantize))
                   * gpu.hostOpS;
    h.backwardS = (stack.moeHostOpsBackward + experts * (stack.expertHostOpsBackward + quantize))
                  * gpu.hostOpS;
    h.backwardS += recomputed * (h.beforeWaitS + h.afterWaitS);
    return h;
}

void applyMoeHostTime(LayerTimes &moe, const MoeHostTime &host)
{
    if (!host.priced())
        return;
    const double after = std::min(moe.expertForward, moe.forward);
    const double before = moe.forward - after;
    const double forward = std::max(before, host.beforeWaitS) + std::max(after, host.afterWaitS);
    moe.hostWaitForward = forward - moe.forward;
    moe.forward = forward;
    const double backward = std::max(moe.backward, host.backwardS);
    moe.hostWaitBackward = backward - moe.backward;
    moe.backward = backward;
}

MoeHostTime applyMoeHost(LayerTimes &moe,
                         const StackProfile &stack,
                         const GpuSpec &gpu,
                         const ModelDims &model,
                         int ep,
                         Precision precision,
                         double recomputed)
{
    if (!model.isMoe())
        return {};
    const MoeHostTime host = moeHostTime(stack,
                                         gpu,
                                         double(model.experts) / std::max(1, ep),
                                         precision != Precision::Bf16 && gpu.fp8Tflops > 0,
                                         recomputed);
    applyMoeHostTime(moe, host);
    return host;
}

} // namespace railyard::engine
