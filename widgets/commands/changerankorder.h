#pragma once

#include "layoutcommand.h"

#include <string>

namespace railyard {

// Changes the rank order ("tp-cp-ep-dp-pp": TP fastest, so TP groups fill a server) and goes
// back to the placement the order gives: a hand-made mapping belongs to the order it was made
// under, so it is dropped.
class ChangeRankOrder : public LayoutCommand
{
public:
    ChangeRankOrder(Document *document, const std::string &order);
    int id() const override;

    static engine::Layout apply(const engine::Layout &layout, const std::string &order);
};

} // namespace railyard
