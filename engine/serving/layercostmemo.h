#pragma once

// servingLayerCost of each kind of layer (dense or MoE, full or sliding-window attention) at one
// pass, priced on first use: every stage of a pass runs the same kinds of layers at the same
// pass, so a pass prices each kind once, not once per stage (the same function on the same
// inputs: the same numbers). One memo per pass (model, pool, pass, compute model and
// precisions fixed).

#include "serving/servingcompute.h"

#include <array>
#include <optional>

namespace railyard::engine {

class LayerCostMemo
{
public:
    const LayerCost &get(const ModelDims &model,
                         bool moe,
                         bool sliding,
                         const ServingPoolShape &pool,
                         const PassShape &pass,
                         const ComputeModel &compute,
                         Precision weights,
                         Precision kvPrecision)
    {
        std::optional<LayerCost> &c = m_cost[(moe ? 2 : 0) + (sliding ? 1 : 0)];
        if (!c)
            c = servingLayerCost(model, moe, sliding, pool, pass, compute, weights, kvPrecision);
        return *c;
    }

private:
    std::array<std::optional<LayerCost>, 4> m_cost;
};

} // namespace railyard::engine
