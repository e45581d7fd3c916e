#include "dropplan.h"

#include "base/units.h"
#include "clustergeometry.h"
#include "clusterscene.h"
#include "document/document.h"
#include "layout/parallel.h"
#include "palette/groupmime.h"
#include "step/evaluationdiff.h"

#include <QCoreApplication>

#include <numeric>

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

// The GPUs a group of `size` takes when dropped at `pos`; with a reason it cannot in `why`, the
// GPUs it would have reached (to mark them red), or none.
std::vector<int> groupTargets(const ClusterScene &scene,
                              const QPointF &pos,
                              int size,
                              const QString &name,
                              QString *why,
                              QString *where)
{
    const engine::Topology &t = scene.document()->topology();
    const int count = t.gpuCount();
    const int gpn = t.shape().gpusPerNode;
    int first = -1;
    int span = 0; // GPUs of the server or rack dropped on
    if (const int gpu = scene.gpuAt(pos); gpu >= 0) {
        first = gpu;
        *where = tr("GPU %1").arg(gpu);
    } else if (const int node = scene.nodeAt(pos); node >= 0) {
        first = node * gpn;
        span = gpn;
        *where = t.shape().nodesPerDomain > 1 ? tr("tray %1").arg(node) : tr("server %1").arg(node);
    } else if (const int rack = scene.rackAt(pos); rack >= 0) {
        const ClusterGeometry &g = scene.geometry();
        first = g.firstNodeOfRack(rack) * gpn;
        span = (g.firstNodeOfRack(rack + 1) - g.firstNodeOfRack(rack)) * gpn;
        *where = tr("rack %1").arg(rack);
    } else {
        *why = tr("Drop %1 on a GPU, a server or a rack").arg(name);
        return {};
    }
    if (first + size > count) {
        *why = tr("%1 needs %2 GPUs from %3, but the cluster ends at GPU %4")
                       .arg(name)
                       .arg(size)
                       .arg(span > 0 ? tr("GPU %1 (%2)").arg(first).arg(*where)
                                     : tr("GPU %1").arg(first))
                       .arg(count - 1);
        std::vector<int> reached(static_cast<std::size_t>(count - first));
        std::iota(reached.begin(), reached.end(), first);
        return reached;
    }
    std::vector<int> targets(static_cast<std::size_t>(size));
    std::iota(targets.begin(), targets.end(), first);
    return targets;
}

void finish(const ClusterScene &scene, DropPlan &plan, engine::MappingEdit edit, bool price)
{
    const Document &doc = *scene.document();
    if (!edit.ok()) {
        plan.ok = false;
        plan.message = QString::fromStdString(edit.error);
        // The engine's reasons start in lower case, for use after a colon.
        if (!plan.message.isEmpty())
            plan.message[0] = plan.message[0].toUpper();
        return;
    }
    std::vector<int> mapping = normalizedMapping(std::move(edit.mapping));
    if (mapping == normalizedMapping(doc.layout().mapping)) {
        plan.ok = true;
        plan.noChange = true;
        return;
    }
    plan.ok = true;
    plan.mapping = std::move(mapping);
    if (!price)
        return;
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
        if (drag->job != job) {
            plan.message = tr("%1 belongs to a job with other parallel sizes or another cluster; "
                              "drag it again from the Groups palette")
                                   .arg(name);
            return plan;
        }
        const engine::RankLayout *ranks = scene.ranks();
        if (!ranks) {
            plan.message = tr("The parallel sizes do not fill the cluster, so there are no ranks "
                              "to place");
            return plan;
        }
        const std::vector<int> members = groupRanks(*ranks, drag->group);
        if (members.empty()) {
            plan.message = tr("%1 does not exist in this job").arg(name);
            return plan;
        }
        QString why, where;
        plan.targets = groupTargets(scene,
                                    scenePos,
                                    static_cast<int>(members.size()),
                                    name,
                                    &why,
                                    &where);
        if (!why.isEmpty()) {
            plan.message = why;
            return plan;
        }
        plan.title = QStringLiteral("%1 \u2192 %2").arg(name, gpuListText(plan.targets));
        plan.commandText = tr("Place %1 on %2").arg(name, gpuListText(plan.targets));
        finish(scene, plan, placeGroup(doc.layout(), drag->group, plan.targets), price);
        if (plan.noChange)
            plan.message = tr("%1 is already on %2").arg(name, gpuListText(plan.targets));
        else if (plan.ok)
            plan.message = plan.commandText;
        return plan;
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
        finish(scene, plan, engine::swapGpus(doc.layout(), from, to), price);
        if (plan.ok && !plan.noChange)
            plan.message = plan.commandText;
        else if (plan.noChange)
            plan.message = tr("GPUs %1 and %2 run no ranks to swap").arg(from).arg(to);
        return plan;
    }
    return plan;
}

DropPlan planMakeGroup(const ClusterScene &scene, GroupKind kind, const std::vector<int> &gpus)
{
    DropPlan plan;
    plan.ours = true;
    plan.targets = gpus;
    const Document &doc = *scene.document();
    const engine::MappingEdit edit = makeGroupHere(doc.layout(), kind, gpus);
    QString name = kindNoun(kind);
    if (const engine::RankLayout *ranks = scene.ranks(); ranks && !gpus.empty()) {
        if (const int rank = ranks->rankOfGpu(gpus.front()); rank >= 0)
            name = groupName(GroupRef{kind, groupOfRank(*ranks, kind, rank)});
    }
    plan.title = QStringLiteral("%1 \u2192 %2").arg(name, gpuListText(gpus));
    plan.commandText = tr("Make %1 on %2").arg(name, gpuListText(gpus));
    finish(scene, plan, edit, false);
    if (plan.noChange)
        plan.message = tr("%1 is already on %2").arg(name, gpuListText(gpus));
    else if (plan.ok)
        plan.message = plan.commandText;
    return plan;
}

} // namespace railyard
