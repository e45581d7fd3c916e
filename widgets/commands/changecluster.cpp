#include "changecluster.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

ChangeCluster::ChangeCluster(Document *document,
                             const engine::ClusterConfig &cluster,
                             const QString &text,
                             const QString &mergeKey)
    : LayoutCommand(document, apply(document->layout(), cluster), text, mergeKey)
{}

int ChangeCluster::id() const
{
    return ChangeClusterId;
}

engine::Layout ChangeCluster::apply(const engine::Layout &layout,
                                    const engine::ClusterConfig &cluster)
{
    engine::Layout out = layout;
    out.cluster = cluster;
    const int oldGpus = layout.cluster.gpuCount();
    const int newGpus = cluster.gpuCount();
    if (oldGpus == newGpus)
        return out;
    out.mapping.clear();
    engine::ParallelConfig &p = out.parallel;
    const long long modelParallel = 1LL * p.tp * p.cp * p.pp;
    if (p.dp && modelParallel * *p.dp == oldGpus && newGpus % modelParallel == 0)
        p.dp = static_cast<int>(newGpus / modelParallel);
    return out;
}

} // namespace railyard
