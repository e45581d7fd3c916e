#include "dropplan.h"

#include "base/units.h"
#include "clustergeometry.h"
#include "clusterscene.h"
#include "document/document.h"
#include "layout/parallel.h"
#include "palette/groupmime.h"
#include "serving/servingevaluate.h"
#include "serving/servingplacement.h"
#include "step/evaluationdiff.h"

#include <QCoreApplication>

#include <optional>

namespace railyard {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("DropPlan", text);
}

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

// The site under `pos` that a group can be dropped on: a GPU, a server (a tray) or a rack.
std::optional<engine::DropSite> siteAt(const ClusterScene &scene, const QPointF &pos)
{
    const engine::Topology &t = scene.document()->topology();
    const int gpn = t.shape().gpusPerNode;
    if (const int gpu = scene.gpuAt(pos); gpu >= 0)
        return engine::DropSite::gpu(gpu);
    if (const int node = scene.nodeAt(pos); node >= 0)
        return engine::DropSite::server(node, gpn, t.shape().nodesPerDomain > 1);
    if (const int rack = scene.rackAt(pos); rack >= 0) {
        const ClusterGeometry &g = scene.geometry();
        return engine::DropSite::rack(rack,
                                      g.firstNodeOfRack(rack),
                                      g.firstNodeOfRack(rack + 1),
                                      gpn);
    }
    return std::nullopt;
}

// The engine's reasons start in lower case, for use after a colon.
QString sentence(const std::string &reason)
{
    QString text = QString::fromStdString(reason);
    if (!text.isEmpty())
        text[0] = text[0].toUpper();
    return text;
}

// The serving layout's time per output token with `mapping` (0 when it cannot be priced):
// the numbers alone, without link loads or timelines.
double servingTpot(const Document &doc, const std::vector<int> &mapping)
{
    engine::Layout next = doc.layout();
    next.mapping = mapping;
    engine::ServingOptions options;
    options.linkLoads = false;
    options.timeline = false;
    options.details = false;
    try {
        const engine::ServingEvaluation e = engine::evaluateServing(next, doc.topology(), options);
        return e.ok ? e.tpotS : 0.0;
    } catch (const std::exception &) {
        return 0; // a preview that cannot be priced still shows where the group goes
    }
}

// The drop's outcome: refused (why), no change, or the mapping it makes, priced when asked (a
// training layout's step time, a serving layout's time per output token).
void finish(const Document &doc, DropPlan &plan, const engine::PlacementPlan &placement, bool price)
{
    plan.ok = placement.ok();
    plan.noChange = placement.noChange;
    if (!plan.ok) {
        plan.message = sentence(placement.error);
        return;
    }
    if (plan.noChange)
        return;
    plan.mapping = placement.mapping;
    if (!price)
        return;
    if (doc.isServing()) {
        plan.tpotS = servingTpot(doc, plan.mapping);
        return;
    }
    engine::Layout next = doc.layout();
    next.mapping = plan.mapping;
    engine::EvaluateOptions options;
    options.linkLoads = false;
    options.timeline = false;
    try {
        const engine::Evaluation e = doc.evaluateVariant(next, options);
        if (e.ok)
            plan.stepTimeS = e.stepTimeS;
    } catch (const std::exception &) {
        // A preview that cannot be priced still shows where the group goes.
    }
}

// A group's drop as the engine planned it (a training rank group or a serving group): the
// cue's title, the command's text and the status message, priced when `price`.
DropPlan placeGroup(DropPlan plan,
                    const QString &name,
                    const engine::PlacementPlan &placement,
                    const Document &doc,
                    bool price)
{
    plan.targets = placement.targets;
    if (placement.refusal != engine::PlacementPlan::Refusal::None
        && placement.refusal != engine::PlacementPlan::Refusal::Refused) {
        plan.message = sentence(placement.error);
        return plan;
    }
    plan.title = QStringLiteral("%1 \u2192 %2").arg(name, gpuListText(plan.targets));
    plan.commandText = tr("Place %1 on %2").arg(name, gpuListText(plan.targets));
    finish(doc, plan, placement, price);
    if (plan.noChange)
        plan.message = tr("%1 is already on %2").arg(name, gpuListText(plan.targets));
    else if (plan.ok)
        plan.message = plan.commandText;
    return plan;
}

// A serving layout's chip: the serving engine's group, named as it places it.
DropPlan planServingGroupDrop(const ClusterScene &scene,
                              const GroupRef &group,
                              const QPointF &scenePos,
                              bool price)
{
    DropPlan plan;
    plan.ours = true;
    const Document &doc = *scene.document();
    const engine::ServingGpuGroups *groups = doc.servingGroups();
    if (!groups || !groups->ok()) {
        plan.title = servingKindNoun(group.kind);
        plan.message = tr("The serving pools cannot be placed: %1")
                               .arg(QString::fromStdString(groups ? groups->error : std::string()));
        return plan;
    }
    const auto kind = servingKind(group.kind);
    const QString name = QString::fromStdString(
            engine::describeServingGroup(*groups, kind, group.index));
    plan.title = name;
    const engine::PlacementPlan placement = engine::planServingGroupDrop(doc.layout(),
                                                                         *groups,
                                                                         kind,
                                                                         group.index,
                                                                         siteAt(scene, scenePos));
    return placeGroup(plan, name, placement, doc, price);
}

} // namespace

QString stepChangeText(double before, double after)
{
    if (before <= 0 || after <= 0)
        return {};
    return QStringLiteral("%1 (%2 \u2192 %3)")
            .arg(QString::fromStdString(engine::describeChange(before, after, "step time")),
                 seconds(before),
                 seconds(after));
}

QString tpotChangeText(double before, double after)
{
    if (before <= 0 || after <= 0)
        return {};
    return QStringLiteral("%1 (%2 \u2192 %3)")
            .arg(QString::fromStdString(engine::describeChange(before, after, "TPOT")),
                 seconds(before),
                 seconds(after));
}

DropPlan planDrop(const ClusterScene &scene,
                  const QMimeData *data,
                  const QPointF &scenePos,
                  bool price)
{
    DropPlan plan;
    const Document &doc = *scene.document();
    const QString job = jobSignature(doc.layout());
    if (const auto drag = mime::decodeGroup(data)) {
        plan.ours = true;
        const QString name = groupName(drag->group);
        plan.title = name;
        if (drag->job == job && doc.isServing())
            return planServingGroupDrop(scene, drag->group, scenePos, price);
        if (drag->job != job) {
            plan.message = tr("%1 belongs to a job with other parallel sizes or another cluster; "
                              "drag it again from the Groups palette")
                                   .arg(name);
            return plan;
        }
        const engine::PlacementPlan placement = engine::planGroupDrop(doc.layout(),
                                                                      doc.ranks(),
                                                                      drag->group,
                                                                      siteAt(scene, scenePos));
        return placeGroup(plan, name, placement, doc, price);
    }
    if (const auto drag = mime::decodeGpu(data)) {
        plan.ours = true;
        const int from = drag->gpu;
        plan.title = tr("GPU %1").arg(from);
        if (drag->job != job || from >= doc.topology().gpuCount()) {
            plan.message = tr("GPU %1 was dragged from another cluster or job").arg(from);
            return plan;
        }
        const int to = scene.gpuAt(scenePos);
        if (to < 0) {
            plan.message = tr("Drop GPU %1 on another GPU to swap their ranks").arg(from);
            plan.targets = {from};
            return plan;
        }
        plan.targets = {from, to};
        if (to == from) {
            plan.ok = true;
            plan.noChange = true;
            plan.message = tr("GPU %1 stays where it is").arg(from);
            return plan;
        }
        plan.title = tr("GPU %1 \u21c4 GPU %2").arg(from).arg(to);
        plan.commandText = tr("Swap GPUs %1 and %2").arg(from).arg(to);
        if (doc.isServing()) {
            // The serving engine's ranks: the training mapping's do not describe its pools.
            const engine::ServingGpuGroups *groups = doc.servingGroups();
            finish(doc,
                   plan,
                   groups ? engine::planServingGpuSwap(doc.layout(), *groups, from, to)
                          : engine::PlacementPlan::refused(engine::PlacementPlan::Refusal::NoRanks,
                                                           "the serving pools cannot be placed"),
                   price);
        } else {
            finish(doc, plan, engine::planGpuSwap(doc.layout(), from, to), price);
        }
        if (plan.ok && !plan.noChange)
            plan.message = plan.commandText;
        else if (plan.noChange)
            plan.message = tr("GPUs %1 and %2 run no ranks to swap").arg(from).arg(to);
        return plan;
    }
    return plan;
}

std::optional<GpuGroup> groupOfGpu(const Document &doc, GroupKind kind, int gpu)
{
    if (doc.isServing()) {
        const engine::ServingGpuGroups *groups = doc.servingGroups();
        const auto engineKind = servingKind(kind);
        const auto index = groups ? engine::servingGroupAtGpu(*groups, engineKind, gpu)
                                  : std::nullopt;
        if (!index)
            return std::nullopt;
        return GpuGroup{QString::fromStdString(
                                engine::describeServingGroup(*groups, engineKind, *index)),
                        engine::servingGroupGpus(*groups, engineKind, *index)};
    }
    const engine::RankLayout *ranks = doc.ranks();
    const auto group = ranks ? engine::groupAtGpu(*ranks, kind, gpu) : std::nullopt;
    if (!group)
        return std::nullopt;
    return GpuGroup{groupName(*group), engine::groupGpus(*ranks, *group)};
}

QString groupKindNoun(const Document &doc, GroupKind kind)
{
    return doc.isServing() ? servingKindNoun(kind) : kindNoun(kind);
}

DropPlan planMakeGroup(const ClusterScene &scene, GroupKind kind, const std::vector<int> &gpus)
{
    DropPlan plan;
    plan.ours = true;
    plan.targets = gpus;
    const Document &doc = *scene.document();
    const std::optional<GpuGroup> group = gpus.empty() ? std::nullopt
                                                       : groupOfGpu(doc, kind, gpus.front());
    const QString name = group ? group->name : groupKindNoun(doc, kind);
    engine::PlacementPlan placement;
    if (!doc.isServing()) {
        placement = engine::planMakeGroup(doc.layout(), doc.ranks(), kind, gpus);
    } else if (const engine::ServingGpuGroups *groups = doc.servingGroups()) {
        // The serving engine's group: the training ranks do not describe the pools.
        placement = engine::planServingMakeGroup(doc.layout(), *groups, servingKind(kind), gpus);
    } else {
        placement = engine::PlacementPlan::refused(engine::PlacementPlan::Refusal::NoRanks,
                                                   "the serving pools cannot be placed");
    }
    plan.title = QStringLiteral("%1 \u2192 %2").arg(name, gpuListText(gpus));
    plan.commandText = tr("Make %1 on %2").arg(name, gpuListText(gpus));
    finish(doc, plan, placement, false);
    if (plan.noChange)
        plan.message = tr("%1 is already on %2").arg(name, gpuListText(gpus));
    else if (plan.ok)
        plan.message = plan.commandText;
    return plan;
}

} // namespace railyard
