#pragma once

#include "document/groupref.h"
#include "document/viewstate.h"
#include "step/evaluate.h"

#include <QColor>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace railyard {

// What the canvas shows on top of the hardware, read by the items as they paint: each GPU's
// rank and group (for colouring by a parallel dimension) and, in the link-load view, every
// link's load from the latest evaluation. The scene fills it from the document's and the view
// state's signals; the items never look at the document. The user's choices (the colouring
// dimension, the link-load switch) stay in the ViewState: this only derives from them.
struct CanvasState
{
    const ViewState *view = nullptr; // never null while the scene lives
    std::optional<GroupKind> colourBy() const { return view ? view->colourBy() : std::nullopt; }
    bool linkLoad() const { return view && view->linkLoad(); }
    std::vector<int> gpuRank;  // by GPU index; -1 where no rank runs (or the sizes are invalid)
    std::vector<int> gpuGroup; // by GPU index: the group of `colourBy`, or -1
    int groupCount = 0;
    // A serving layout: the groups are the serving engine's; what the legend calls them
    // ("Replicas", "Prefill/decode pools"), the GPUs' captions' short kind ("replica", "pool"),
    // and names for the groups where they have some ("prefill", "decode"; empty: numbers).
    bool serving = false; // the loads are one decode step's
    QString groupHeading;
    QString kindShort;
    std::vector<QString> groupNames;
    std::shared_ptr<const engine::LinkLoads> loads;
    // The loads shown instead of the step average: the lesson's step while one is shown, else
    // the view state's playback moment (dense by link id, engine::StepMoment); empty: none.
    const std::vector<float> &moment() const
    {
        return lesson || !view ? lessonLoad : view->moment().utilization;
    }
    // While a moment is shown: per link, 1 where more bytes go b -> a than a -> b then (the
    // flowing dashes run that way); and how far the dashes have moved, in dash periods.
    const std::vector<std::uint8_t> &momentReverse() const
    {
        return lesson || !view ? lessonReverse : view->moment().reverse;
    }
    double dashPhase = 0;
    bool dashes() const { return !moment().empty(); }
    bool reversed(int link) const
    {
        const std::size_t i = static_cast<std::size_t>(link);
        return link >= 0 && i < momentReverse().size() && momentReverse()[i] != 0;
    }
    // The collective lesson's step, while one is shown (see `lesson`): its links' loads and
    // directions, dense by link id.
    std::vector<float> lessonLoad;
    std::vector<std::uint8_t> lessonReverse;

    // The NCCL graph overlay as drawn: what the legend says of it and the colour of each
    // channel shown (empty caption: no overlay).
    QString graphCaption;
    std::vector<QColor> graphColours;

    bool colouring() const { return colourBy().has_value() && !gpuGroup.empty(); }
    bool ordered() const { return colourBy() == GroupKind::PpStage; }
    QColor groupFill(int group) const;
    // The GPU's fill: its group's colour when colouring, else the plain GPU colour.
    QColor gpuFill(int gpu) const;
    // A second line under the GPU's name: "TP 3 · r25", or empty.
    QString gpuCaption(int gpu) const;

    // A collective lesson's step is on the canvas: moment() is its links' loads (see
    // ClusterScene::syncLesson), shown whether or not the link-load view is on.
    bool lesson = false;

    bool showLoads() const { return lesson || (linkLoad() && loads && loads->size() > 0); }
    // The link's load in the link-load view: its utilization averaged over the step (bytes
    // per step over what it could carry in the step), or at the playback moment while the step
    // plays; 0 when idle or unknown.
    double load(int link) const
    {
        if (link < 0)
            return 0;
        const std::size_t i = static_cast<std::size_t>(link);
        if (const std::vector<float> &m = moment(); !m.empty())
            return i < m.size() ? m[i] : 0.0;
        if (!loads || i >= loads->size())
            return 0;
        return loads->utilization[i];
    }
};

} // namespace railyard
