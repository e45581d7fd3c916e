#pragma once

// What the Workload dock's two halves share (workloadpanel.cpp builds and syncs the dock,
// workloadpaneledits.cpp turns edits into undo commands): the model dimensions by field.

#include "layout/transformer.h"
#include "workloadpanel.h"

#include <optional>

namespace railyard::workloadfields {

using Field = WorkloadPanel::Dimension;
using enum WorkloadPanel::Dimension;

inline const char *const kDimNames[] = {"layers",
                                        "hidden size",
                                        "FFN size",
                                        "attention heads",
                                        "key/value heads",
                                        "vocabulary",
                                        "experts",
                                        "experts per token",
                                        "expert FFN size",
                                        "MoE layers"};

inline int dimValue(const engine::ModelDims &d, int field)
{
    switch (field) {
    case Layers: return d.layers;
    case Hidden: return d.hidden;
    case Ffn: return d.ffn;
    case Heads: return d.heads;
    case KvHeads: return d.kvHeads;
    case Vocab: return d.vocab;
    case Experts: return d.experts;
    case TopK: return d.topK;
    case ExpertFfn: return d.expertFfn;
    case MoeLayers: return d.moeLayers;
    }
    return 0;
}

// The override slot in a ModelConfig for a field.
inline void setOverride(engine::ModelConfig &m, int field, std::optional<int> v)
{
    auto moe = [&]() -> engine::MoeOverrides & {
        if (!m.moe)
            m.moe = engine::MoeOverrides{};
        return *m.moe;
    };
    switch (field) {
    case Layers: m.layers = v; break;
    case Hidden: m.hidden = v; break;
    case Ffn: m.ffn = v; break;
    case Heads: m.heads = v; break;
    case KvHeads: m.kvHeads = v; break;
    case Vocab: m.vocab = v; break;
    case Experts: moe().experts = v; break;
    case TopK: moe().topK = v; break;
    case ExpertFfn: moe().expertFfn = v; break;
    case MoeLayers: moe().moeLayers = v; break;
    }
    if (m.moe && *m.moe == engine::MoeOverrides{})
        m.moe.reset();
}

} // namespace railyard::workloadfields
