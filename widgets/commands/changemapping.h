#pragma once

#include "layoutcommand.h"

#include <vector>

namespace railyard {

// Places ranks on GPUs (empty: the order alone decides). A drag that moves a group over many
// GPUs passes one `dragId` for all its steps, so the whole drag is one undo step.
class ChangeMapping : public LayoutCommand
{
public:
    ChangeMapping(Document *document, std::vector<int> mapping, const QString &text, int dragId = 0);
    int id() const override;
};

} // namespace railyard
