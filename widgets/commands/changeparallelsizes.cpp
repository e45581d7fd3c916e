#include "changeparallelsizes.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

engine::Layout withParallel(const engine::Layout &layout, const engine::ParallelConfig &parallel)
{
    engine::Layout out = layout;
    out.parallel = parallel;
    const long long ranks = 1LL * parallel.tp * parallel.cp * parallel.pp * out.dataParallel();
    if (static_cast<long long>(out.mapping.size()) != ranks)
        out.mapping.clear();
    return out;
}

} // namespace

ChangeParallelSizes::ChangeParallelSizes(Document *document,
                                         const engine::ParallelConfig &parallel,
                                         const QString &mergeKey)
    : LayoutCommand(document,
                    withParallel(document->layout(), parallel),
                    QObject::tr("Change parallel sizes"),
                    mergeKey)
{}

int ChangeParallelSizes::id() const
{
    return ChangeParallelSizesId;
}

} // namespace railyard
