// The headless side of export: a layout read from a file and shown as the window would open it
// (applyLayoutView), the part of it a region names, and its diagram at a moment of the step.
#include "diagramexport.h"

#include "base/jsoncursor.h"
#include "base/safetext.h"
#include "base/units.h"
#include "document/document.h"
#include "document/groupref.h"
#include "document/viewstate.h"
#include "import/ncclgraphoverlay.h"
#include "layout/parallel.h"
#include "render/diagramrenderer.h"
#include "report/moment.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLocale>
#include <QStringList>

#include <new>

namespace railyard {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("Export", text);
}

} // namespace

QRectF regionRect(const ClusterScene &scene, const DiagramRegion &region, QString *error)
{
    using Kind = DiagramRegion::Kind;
    if (region.kind == Kind::Whole)
        return {};
    const ClusterGeometry &g = scene.geometry();
    const engine::Topology &t = g.topology();
    const QString what = tr("--region %1").arg(region.text);
    QRectF rect;
    if (region.kind == Kind::Area) {
        rect = region.area.intersected(g.bounds());
        if (rect.isEmpty()) {
            const QRectF b = g.bounds();
            *error = tr("%1 lies outside the cluster, which covers x %2 to %3 and y %4 to %5")
                             .arg(what)
                             .arg(b.left(), 0, 'f', 0)
                             .arg(b.right(), 0, 'f', 0)
                             .arg(b.top(), 0, 'f', 0)
                             .arg(b.bottom(), 0, 'f', 0);
            return {};
        }
        return rect;
    }
    int count = 0;
    QString noun;
    switch (region.kind) {
    case Kind::Gpus:
        count = t.gpuCount();
        noun = tr("GPUs");
        break;
    case Kind::Nodes:
        count = g.nodeCount();
        noun = t.shape().nodesPerDomain > 1 ? tr("trays") : tr("servers");
        break;
    case Kind::Racks:
        count = g.rackCount();
        noun = tr("racks");
        break;
    case Kind::ScalableUnits:
        count = static_cast<int>(g.blocks().size());
        noun = tr("scalable units");
        break;
    default: break;
    }
    for (const auto &[first, last] : region.ranges) {
        if (last >= count) {
            *error = count == 0 ? tr("%1: the cluster has no %2").arg(what, noun)
                                : tr("%1: the cluster has %2 %3, numbered 0 to %4")
                                          .arg(what, QLocale::c().toString(count), noun)
                                          .arg(count - 1);
            return {};
        }
        for (int i = first; i <= last; ++i) {
            switch (region.kind) {
            case Kind::Gpus: rect |= g.deviceRect(t.gpuDevice(i)); break;
            case Kind::Nodes: rect |= g.nodeRect(i); break;
            case Kind::Racks: rect |= g.rackPaintRect(i); break;
            case Kind::ScalableUnits: rect |= g.blocks()[static_cast<std::size_t>(i)].rect; break;
            default: break;
            }
        }
    }
    // A little room around what was asked for, so its edges are not cut.
    constexpr double kRegionMargin = 16;
    return rect.adjusted(-kRegionMargin, -kRegionMargin, kRegionMargin, kRegionMargin);
}

void applyLayoutView(ClusterScene &scene)
{
    // What the file says, before the default colouring below is kept in the document's view.
    const engine::Json saved = scene.document()->layout().view.get();
    if (const engine::ServingGpuGroups *s = scene.document()->servingGroups()) {
        // Serving: the prefill and decode pools when they are separate, else the TP groups.
        if (s->disaggregated)
            scene.setColourBy(GroupKind::Cp);
        else if (s->count[engine::ServingGpuGroups::Tp] > 0)
            scene.setColourBy(GroupKind::Tp);
    } else if (const engine::RankLayout *ranks = scene.ranks()) {
        for (GroupKind kind :
             {GroupKind::Tp, GroupKind::Ep, GroupKind::Cp, GroupKind::PpStage, GroupKind::DpReplica})
            if (ranks->size(dimOf(kind)) > 1) {
                scene.setColourBy(kind);
                break;
            }
    }
    // A layout imported from an NCCL graph XML shows its graph, as the window does.
    const engine::Json &original = scene.document()->layout().original.get();
    if (const auto it = original.find("imported"); it != original.end() && scene.viewState()) {
        ViewState::GraphOverlay overlay;
        overlay.graphs = engine::graphsFromImported(*it);
        if (const auto f = it->find("file"); f != it->end() && f->is_string())
            overlay.file = QString::fromStdString(f->get<std::string>());
        if (!overlay.graphs.empty())
            scene.viewState()->setGraphOverlay(std::move(overlay));
    }
    if (ViewState *view = scene.viewState())
        view->readLayoutView(saved);
}

void showBusyLinksWhenCoarse(ClusterScene &scene, const QRectF &source, bool namesLinkLoad)
{
    ViewState *view = scene.viewState();
    if (!view || namesLinkLoad
        || render::finestDetailWithin(scene, source, render::DiagramOptions::kDiagramElementBudget)
                   >= Detail::Devices)
        return;
    view->setLinkLoad(true);
}

// The footer of a moment's diagram: when, and what stage 0 runs then (the view state's moment)
// on `timeline`, `lengthS` long: "the 1.2 s step", "the 11.2 ms decode step", "one request's
// 11.6 s life".
static QString momentFooter(const engine::StepTimeline &timeline,
                            const QString &of,
                            const engine::StepMoment &moment)
{
    const double at = moment.at;
    // What stage 0 is doing then (the phases of the other stages are alike, shifted).
    QStringList doing;
    for (int i : moment.running) {
        const engine::Phase &p = timeline.phases[static_cast<std::size_t>(i)];
        if (p.stage == 0 || p.stage < 0)
            doing << QString::fromStdString(p.name);
    }
    doing.removeDuplicates();
    QString line = tr("Link load at %1 of %2")
                           .arg(QString::fromStdString(engine::formatSeconds(at)), of);
    if (!doing.isEmpty())
        line += tr(" (stage 0: %1)").arg(doing.join(QStringLiteral("; ")));
    return line + QStringLiteral(" \u00b7 ") + defaultExportFooter();
}

static bool loadAndExport(const QString &layoutPath,
                          const QString &out,
                          DiagramExportOptions options,
                          double at,
                          QString *error);

bool exportLayoutDiagram(
        const QString &layoutPath, const QString &out, double scale, double at, QString *error)
{
    DiagramExportOptions options;
    options.scale = scale;
    return exportLayoutDiagram(layoutPath, out, options, at, error);
}

bool exportLayoutDiagram(const QString &layoutPath,
                         const QString &out,
                         DiagramExportOptions options,
                         double at,
                         QString *error)
{
    try {
        return loadAndExport(layoutPath, out, std::move(options), at, error);
    } catch (const std::bad_alloc &) {
        *error = tr("%1: out of memory while exporting the diagram of %2; try a smaller PNG "
                    "(--width), a PNG instead of SVG or PDF, or a part of the cluster")
                         .arg(QFileInfo(out).absoluteFilePath(), layoutPath);
        return false;
    }
}

static bool loadAndExport(const QString &layoutPath,
                          const QString &out,
                          DiagramExportOptions options,
                          double at,
                          QString *error)
{
    std::unique_ptr<Document> doc = Document::load(layoutPath, error);
    if (!doc)
        return false;
    const engine::Json &layoutView = doc->layout().view.get();
    const bool namesLinkLoad = layoutView.is_object() && layoutView.contains("link_load");
    // The view state first: the scene colours through it, and it outlives the scene.
    ViewState view(doc.get());
    ClusterScene scene(doc.get());
    scene.setViewState(&view);
    applyLayoutView(scene);
    if (at >= 0) {
        const auto text = [](double s) { return QString::fromStdString(engine::formatSeconds(s)); };
        const engine::Evaluation &e = doc->evaluation();
        const engine::ServingEvaluation *serving = doc->servingEvaluation();
        const bool request = options.momentOfRequest;
        if (request && !serving) {
            *error = tr("%1: --at request:%2: a request's life is a serving layout's; this "
                        "layout trains (give --at TIME, a moment of its step)")
                             .arg(layoutPath, text(at));
            return false;
        }
        // A serving layout's moment is of its decode step or of one request's life.
        if (serving)
            view.setServingTimeline(request ? ViewState::ServingTimeline::Request
                                            : ViewState::ServingTimeline::DecodeStep);
        const engine::StepTimeline &timeline = view.timeline();
        const double length = serving ? timeline.stepS : e.stepTimeS;
        const QString step = request   ? tr("one request's life")
                             : serving ? tr("the decode step")
                                       : tr("the step");
        if (timeline.empty()) {
            *error = tr("%1: %2 has no timeline to take a moment from (%3)")
                             .arg(layoutPath,
                                  step,
                                  QString::fromStdString(serving ? serving->error : e.error));
            return false;
        }
        if (at > length) {
            *error = tr("%1: --at %2%3 is past the end of %4, which lasts %5; give a time from 0 "
                        "to %5")
                             .arg(layoutPath,
                                  request ? QStringLiteral("request:") : QString(),
                                  text(at),
                                  step,
                                  text(length));
            return false;
        }
        view.setPlaybackTime(at);
        view.setLinkLoad(true);
        const QString of = request   ? tr("one request's %1 life").arg(text(length))
                           : serving ? tr("the %1 decode step").arg(text(length))
                                     : tr("the %1 step").arg(text(length));
        options.footer = momentFooter(timeline, of, view.moment());
    }
    if (options.region.kind != DiagramRegion::Kind::Whole) {
        QString why;
        options.source = regionRect(scene, options.region, &why);
        if (!why.isEmpty()) {
            *error = tr("%1: %2").arg(layoutPath, why);
            return false;
        }
        options.footer = tr("Part of the cluster: %1")
                                 .arg(QString::fromStdString(
                                         engine::plainText(options.region.text.toStdString())))
                         + QStringLiteral(" \u00b7 ")
                         + (options.footer.isEmpty() ? defaultExportFooter() : options.footer);
    }
    if (at < 0)
        showBusyLinksWhenCoarse(scene, options.source, namesLinkLoad);
    return exportDiagram(scene, out, options, error);
}

} // namespace railyard
