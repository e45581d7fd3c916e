#include "inspectorpanel.h"

#include "devicedescription.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "linkdescription.h"
#include "scene/clusterscene.h"
#include "scene/style.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace railyard {

namespace {
// A leaf of a 16k-GPU cluster has a few dozen links; a spine, hundreds. Enough to read.
constexpr int kMaxRows = 1000;
} // namespace

InspectorPanel::InspectorPanel(QWidget *parent)
    : QWidget(parent)
    , m_header(new QLabel(this))
    , m_links(new QTreeWidget(this))
{
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::RichText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_links->setRootIsDecorated(false);
    m_links->setUniformRowHeights(true);
    m_links->setAlternatingRowColors(true);
    m_links->setHeaderLabels({tr("Link to"), tr("Kind"), tr("GB/s"), tr("Lanes")});
    m_links->header()->setStretchLastSection(false);
    m_links->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c)
        m_links->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(m_links, 1);
    showDevice(-1);
}

void InspectorPanel::setScene(ClusterScene *scene)
{
    if (m_scene)
        disconnect(m_scene->viewState(), nullptr, this, nullptr);
    m_scene = scene;
    if (scene) {
        connect(scene->viewState(), &ViewState::changed, this, [this](ViewState::Changes what) {
            if (!m_scene)
                return;
            if (what & ViewState::SelectedDevice)
                showDevice(m_scene->selectedDevice());
            if (what & ViewState::SelectedLink)
                showLink(m_scene->selectedLink());
        });
    }
    showDevice(scene ? scene->selectedDevice() : -1);
}

QString InspectorPanel::headerText() const
{
    return m_header->text();
}

// "4.49 GB per step · 12% of the step · carries TP, PP send/recv", from the document's loads
// (a serving layout's: one decode step).
static QString linkLoadText(const Document &doc, int link)
{
    const std::shared_ptr<const engine::LinkLoads> loads = doc.linkLoads();
    if (!loads || link < 0 || static_cast<std::size_t>(link) >= loads->size())
        return {};
    const bool serving = doc.isServing();
    const std::size_t i = static_cast<std::size_t>(link);
    const double bytes = double(loads->bytesUp[i]) + double(loads->bytesDown[i]);
    if (bytes <= 0)
        return serving ? QObject::tr("idle in a decode step") : QObject::tr("idle in the step");
    QStringList kinds;
    const unsigned mask = engine::kindsOnLink(doc.timeline(), link);
    for (int k = 0; k < engine::kPhaseKinds; ++k)
        if (mask & (1u << unsigned(k)))
            kinds << QString::fromLatin1(engine::toString(engine::PhaseKind(k))).toUpper();
    QString text = (serving ? QObject::tr("%1 GB per decode step · %2% utilization (decode-step "
                                          "average)")
                            : QObject::tr("%1 GB per step · %2% utilization (step average)"))
                           .arg(bytes / 1e9, 0, 'g', 3)
                           .arg(100.0 * loads->utilization[i], 0, 'g', 3);
    if (!kinds.isEmpty())
        text += QObject::tr(" · carries %1").arg(kinds.join(QStringLiteral(", ")));
    return text;
}

void InspectorPanel::showLink(int link)
{
    if (!m_scene || link < 0) {
        if (m_device < 0)
            showDevice(-1);
        return;
    }
    // The link's page: what it joins, its bytes and utilization, and what crosses it (the same
    // words as its tooltip, from the engine).
    m_device = -1;
    m_links->clear();
    const CanvasState &state = m_scene->canvasState();
    const double now = state.moment().empty() ? -1.0 : state.load(link);
    m_header->setText(
            linkTooltip(documentLinkFacts(*m_scene->document(), m_scene->ranks(), link, now)));
}

void InspectorPanel::showDevice(int device)
{
    m_device = device;
    m_links->clear();
    if (m_scene && device < 0 && m_scene->selectedLink() >= 0) {
        showLink(m_scene->selectedLink());
        return;
    }
    if (!m_scene || device < 0) {
        m_header->setText(tr("<i>Click a device or a link on the canvas, or search for a device "
                             "(\u201cGPU 12\u201d, \u201cnode 3\u201d, \u201cleaf 2\u201d).</i>"));
        return;
    }
    const engine::Topology &t = m_scene->document()->topology();
    m_header->setText(deviceTooltip(t, device));
    int rows = 0;
    for (int link : t.linksOf(device)) {
        if (++rows > kMaxRows)
            break;
        const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
        auto *item = new QTreeWidgetItem(m_links);
        item->setText(0, QString::fromStdString(t.deviceName(t.otherEnd(link, device))));
        item->setText(1, style::linkKindName(l.kind));
        item->setForeground(1, style::linkColor(l.kind));
        item->setText(2, QLocale().toString(l.gbPerS, 'f', l.gbPerS < 100 ? 1 : 0));
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        item->setText(3, QLocale().toString(l.lanes, 'g', 3));
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(0, QString::fromStdString(t.linkName(link)));
        const QString load = linkLoadText(*m_scene->document(), link);
        if (!load.isEmpty())
            for (int c = 0; c < 4; ++c)
                item->setToolTip(c, QString::fromStdString(t.linkName(link)) + "\n" + load);
    }
}

} // namespace railyard
