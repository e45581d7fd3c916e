#pragma once

#include "document/groupref.h"

#include <QPointF>
#include <QString>

#include <optional>
#include <vector>

class QMimeData;

namespace railyard {

class ClusterScene;
class Document;

// What dropping something on the canvas would do, worked out before the drop (to show the cue
// while dragging) and again at the drop. A group chip dropped on a GPU takes that GPU and the
// ones after it; dropped on a server or a rack it takes the first GPUs there (and the servers
// after it when it is larger). A GPU dropped on another GPU swaps their ranks. On a serving
// layout the groups and ranks are the serving engine's (engine/serving/servingplacement.h):
// the cue names the serving group ("TP group 3 of replica 2 (decode pool)") and prices TPOT.
struct DropPlan
{
    bool ours = false;        // a Railyard drag at all; otherwise the canvas ignores it
    bool ok = false;          // the drop would change the placement
    bool noChange = false;    // it would work but leave everything where it is
    QString title;            // "TP group 3 → GPUs 4–11"
    QString message;          // what it does, or why it cannot ("…: the cluster ends at GPU 127")
    QString commandText;      // the undo text: "Place TP group 3 on GPUs 4–11"
    std::vector<int> targets; // GPUs to mark on the canvas
    std::vector<int> mapping; // the new mapping (normalized), when ok
    // With pricing: the step time it would give (0 when it cannot be priced); on a serving
    // layout the time per output token instead (tpotS, and stepTimeS stays 0).
    double stepTimeS = 0;
    double tpotS = 0;
};

// Plans the drop of `data` at `scenePos`. With `price`, also evaluates the step it would give
// (without link loads: a few milliseconds at 16k GPUs), for the cue while dragging.
DropPlan planDrop(const ClusterScene &scene,
                  const QMimeData *data,
                  const QPointF &scenePos,
                  bool price = false);

// The group of `kind` that `gpu` runs, as the document places it: a training layout's rank group
// ("TP group 3"), or a serving layout's serving group ("TP group 3 of replica 2 (decode pool)").
// None when no rank runs there (or the ranks or pools cannot be placed).
struct GpuGroup
{
    QString name;
    std::vector<int> gpus; // its GPUs, rank by rank
};
std::optional<GpuGroup> groupOfGpu(const Document &doc, GroupKind kind, int gpu);
// "TP group", "Replica", "Prefill/decode pool": the noun of `kind` on the document's layout.
QString groupKindNoun(const Document &doc, GroupKind kind);

// "Make a TP group here": the group of `kind` that the first selected GPU runs moves onto the
// selected GPUs (on a serving layout, the serving group: a replica's TP group in its pool).
DropPlan planMakeGroup(const ClusterScene &scene, GroupKind kind, const std::vector<int> &gpus);

// "+13% step time (18.8 s → 21.3 s)": the change between two step times, for messages.
QString stepChangeText(double before, double after);
// The same for a serving layout's time per output token: "+38% TPOT (12.1 ms → 16.7 ms)".
QString tpotChangeText(double before, double after);

} // namespace railyard
