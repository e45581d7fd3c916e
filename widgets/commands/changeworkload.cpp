#include "changeworkload.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

engine::Layout withWorkload(const engine::Layout &layout,
                            const std::optional<engine::ModelConfig> &model,
                            const engine::TrainingConfig &training)
{
    engine::Layout out = layout;
    out.model = model;
    out.training = training;
    return out;
}

} // namespace

ChangeWorkload::ChangeWorkload(Document *document,
                               const std::optional<engine::ModelConfig> &model,
                               const engine::TrainingConfig &training,
                               const QString &text,
                               const QString &mergeKey)
    : LayoutCommand(document, withWorkload(document->layout(), model, training), text, mergeKey)
{}

int ChangeWorkload::id() const
{
    return ChangeWorkloadId;
}

} // namespace railyard
