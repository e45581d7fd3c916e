#include "changefaults.h"

#include "commandid.h"
#include "document/document.h"

#include <algorithm>

namespace railyard {

ChangeFaults::ChangeFaults(Document *document,
                           std::vector<engine::Fault> faults,
                           const QString &text)
    : LayoutCommand(document, apply(document->layout(), std::move(faults)), text)
{}

int ChangeFaults::id() const
{
    return ChangeFaultsId;
}

engine::Layout ChangeFaults::apply(const engine::Layout &layout, std::vector<engine::Fault> faults)
{
    engine::Layout out = layout;
    out.cluster.faults = std::move(faults);
    return out;
}

std::vector<engine::Fault> ChangeFaults::withFault(std::vector<engine::Fault> faults,
                                                   const engine::Fault &fault)
{
    const std::string target = fault.targetText();
    const auto same = std::find_if(faults.begin(), faults.end(), [&](const engine::Fault &f) {
        return f.target == fault.target && f.targetText() == target;
    });
    if (same == faults.end()) {
        faults.push_back(fault);
        return faults;
    }
    *same = fault;
    // Any further entry for the same element goes: the new state is the element's state.
    faults.erase(std::remove_if(std::next(same),
                                faults.end(),
                                [&](const engine::Fault &f) {
                                    return f.target == fault.target && f.targetText() == target;
                                }),
                 faults.end());
    return faults;
}

std::vector<engine::Fault> ChangeFaults::without(const std::vector<engine::Fault> &faults,
                                                 const std::vector<std::size_t> &indices)
{
    std::vector<engine::Fault> out;
    out.reserve(faults.size());
    for (std::size_t i = 0; i < faults.size(); ++i)
        if (std::find(indices.begin(), indices.end(), i) == indices.end())
            out.push_back(faults[i]);
    return out;
}

} // namespace railyard
