#pragma once

#include "layoutcommand.h"

#include <vector>

namespace railyard {

// Sets the cluster's faults (cluster.faults): an element failed, degraded, slowed down or
// restored, a sweep's candidate failed, every fault restored. One undo step; the job and its
// placement stay as they are (the engine prices the faulted cluster, and the fault dock offers
// a recovery as an edit of its own). Check the result with Document::checkLayout() before
// pushing: a fault set the engine cannot route is refused there with its message.
class ChangeFaults : public LayoutCommand
{
public:
    ChangeFaults(Document *document, std::vector<engine::Fault> faults, const QString &text);

    int id() const override;

    static engine::Layout apply(const engine::Layout &layout, std::vector<engine::Fault> faults);

    // `faults` with `fault` in place of any fault that names the same element (so failing an
    // element that was degraded replaces the degradation), else appended.
    static std::vector<engine::Fault> withFault(std::vector<engine::Fault> faults,
                                                const engine::Fault &fault);
    // `faults` without the entries at `indices` (indices into cluster.faults).
    static std::vector<engine::Fault> without(const std::vector<engine::Fault> &faults,
                                              const std::vector<std::size_t> &indices);
};

} // namespace railyard
