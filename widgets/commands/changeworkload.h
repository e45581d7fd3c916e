#pragma once

#include "layoutcommand.h"

#include <optional>

namespace railyard {

// Changes what is trained: the model (absent: the cluster only) and the training settings.
class ChangeWorkload : public LayoutCommand
{
public:
    ChangeWorkload(Document *document,
                   const std::optional<engine::ModelConfig> &model,
                   const engine::TrainingConfig &training,
                   const QString &text,
                   const QString &mergeKey = {});
    int id() const override;
};

} // namespace railyard
