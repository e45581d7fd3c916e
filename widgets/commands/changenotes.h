#pragma once

#include "layoutcommand.h"

namespace railyard {

// Changes the layout's notes. Typing merges into one undo step.
class ChangeNotes : public LayoutCommand
{
public:
    ChangeNotes(Document *document, const QString &notes);
    int id() const override;
};

} // namespace railyard
