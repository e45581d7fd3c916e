#pragma once

#include "layoutcommand.h"

namespace railyard {

// Changes the layout's title. Typing merges into one undo step.
class ChangeTitle : public LayoutCommand
{
public:
    ChangeTitle(Document *document, const QString &title);
    int id() const override;
};

} // namespace railyard
