#pragma once

#include "layoutcommand.h"

namespace railyard {

// Changes the cluster (GPU, servers, NVLink domain, NICs, fabric, price). When the GPU count
// changes, the job is kept filling the cluster: an explicit DP size that filled the old cluster
// is rescaled if it can be, and an explicit rank mapping (which names GPUs by index) is dropped.
class ChangeCluster : public LayoutCommand
{
public:
    ChangeCluster(Document *document,
                  const engine::ClusterConfig &cluster,
                  const QString &text,
                  const QString &mergeKey = {});

    int id() const override;

    // The layout the command would give, for Document::checkLayout() before pushing it.
    static engine::Layout apply(const engine::Layout &layout, const engine::ClusterConfig &cluster);
};

} // namespace railyard
