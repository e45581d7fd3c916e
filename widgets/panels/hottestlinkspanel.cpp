#include "hottestlinkspanel.h"

#include "base/units.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "linkdescription.h"
#include "report/report.h"
#include "scene/style.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace railyard {

namespace {

// The link's name takes what the numbers leave (its kind in its colour and in its tip): a
// "Kind" column left "GPU 0 \u2194 NVSwitc\u2026" for every row of a server's links.
enum Column { NameColumn, LoadColumn, BytesColumn };
constexpr int kLoadRole = Qt::UserRole + 1;
constexpr int kLinkRole = Qt::UserRole + 2;

// A bar as long as the utilization (full at 100%), in its colour on the load scale, with the
// percentage beside it.
class LoadBarDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *painter,
               const QStyleOptionViewItem &option,
               const QModelIndex &index) const override
    {
        QStyleOptionViewItem opt(option);
        initStyleOption(&opt, index);
        opt.text.clear();
        opt.widget->style()->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);
        const double u = index.data(kLoadRole).toDouble();
        const QRect r = option.rect.adjusted(4, 4, -4, -4);
        const int textW = option.fontMetrics.horizontalAdvance(QStringLiteral("100%")) + 6;
        const QRect bar(r.left(), r.top(), std::max(0, r.width() - textW), r.height());
        painter->save();
        painter->fillRect(bar, QColor(0xe5, 0xe7, 0xeb));
        painter->fillRect(QRect(bar.left(),
                                bar.top(),
                                static_cast<int>(bar.width() * std::clamp(u, 0.0, 1.0)),
                                bar.height()),
                          style::loadColor(std::max(u, 0.001)));
        painter->setPen(option.palette.color(QPalette::Text));
        // The percentage over the row's full height (the bar is inset; the text must not be).
        painter->drawText(QRect(bar.right() + 4, option.rect.top(), textW, option.rect.height()),
                          Qt::AlignRight | Qt::AlignVCenter,
                          index.data(Qt::DisplayRole).toString());
        painter->restore();
    }
};

} // namespace

HottestLinksPanel::HottestLinksPanel(QWidget *parent)
    : QWidget(parent)
    , m_header(new QLabel(this))
    , m_list(new QTreeWidget(this))
{
    m_header->setWordWrap(true);
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAlternatingRowColors(true);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setHeaderLabels({tr("Link"), tr("Utilization"), tr("Per step")});
    m_list->header()->setStretchLastSection(false);
    m_list->header()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    m_list->header()->setSectionResizeMode(LoadColumn, QHeaderView::Fixed);
    m_list->header()->resizeSection(LoadColumn, 96);
    m_list->header()->setSectionResizeMode(BytesColumn, QHeaderView::ResizeToContents);
    // Both ends of a name tell two links apart ("GPU 3 \u2194 NVSwitch 0.1"): a narrow dock
    // elides its middle, and the tip has it whole.
    m_list->setTextElideMode(Qt::ElideMiddle);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setItemDelegateForColumn(LoadColumn, new LoadBarDelegate(m_list));
    connect(m_list, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem *item) {
        const int link = item->data(NameColumn, kLinkRole).toInt();
        if (m_view)
            m_view->setSelectedLink(link);
        Q_EMIT linkActivated(link);
    });
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(m_list, 1);
    refresh();
}

HottestLinksPanel::~HottestLinksPanel() = default;

void HottestLinksPanel::setDocument(Document *document, ViewState *view)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    if (m_view)
        disconnect(m_view, nullptr, this, nullptr);
    m_document = document;
    m_view = view;
    if (document)
        connect(document, &Document::evaluationChanged, this, &HottestLinksPanel::refresh);
    if (view)
        connect(view, &ViewState::changed, this, [this](ViewState::Changes what) {
            if (what & ViewState::Moment)
                refresh();
            if (what & ViewState::SelectedLink)
                syncSelection();
        });
    refresh();
}

QString HottestLinksPanel::headerText() const
{
    return m_header->text();
}

void HottestLinksPanel::refresh()
{
    const std::shared_ptr<const engine::LinkLoads> loads = m_document ? m_document->linkLoads()
                                                                      : nullptr;
    if (!loads || loads->size() == 0) {
        m_links.clear();
        m_values.clear();
        m_list->clear();
        m_header->setText(tr("<i>No link loads: the job does not price on this cluster.</i>"));
        return;
    }
    // The moment's busiest links (the view state's), or the step average's. (A moment of
    // another evaluation, before the view state has heard of this one, is not listed.)
    const engine::StepMoment *moment = m_view ? &m_view->moment() : nullptr;
    if (moment && (moment->empty() || moment->utilization.size() != loads->size()))
        moment = nullptr;
    const std::vector<float> &v = moment ? moment->utilization : loads->utilization;
    ++m_rankings;
    m_links = moment ? moment->busiest : engine::busiestByUtilization(v, kTop);
    m_values.clear();
    for (int l : m_links)
        m_values.push_back(v[static_cast<std::size_t>(l)]);
    // A serving layout plays and averages one decode step.
    const bool serving = m_document->isServing();
    const double stepS = m_document->timeline().stepS;
    if (moment)
        m_header->setText((serving ? tr("Busiest links at %1 ms of the %2 ms decode step")
                                   : tr("Busiest links at %1 s of the %2 s step"))
                                  .arg(moment->at * (serving ? 1e3 : 1), 0, 'f', 3)
                                  .arg(stepS * (serving ? 1e3 : 1), 0, 'f', 3));
    else
        m_header->setText(
                (serving ? tr("Busiest links, decode-step average (%1 of %2 links carry traffic)")
                         : tr("Busiest links, step average (%1 of %2 links carry traffic)"))
                        .arg(loads->loaded)
                        .arg(loads->size()));
    rebuildRows();
}

void HottestLinksPanel::rebuildRows()
{
    const engine::Topology &t = m_document->topology();
    const engine::LinkLoads &loads = *m_document->linkLoads();
    m_list->setUpdatesEnabled(false);
    // Rows are reused: a re-rank rewrites 20 rows' texts, no widgets come and go.
    while (m_list->topLevelItemCount() > static_cast<int>(m_links.size()))
        delete m_list->takeTopLevelItem(m_list->topLevelItemCount() - 1);
    while (m_list->topLevelItemCount() < static_cast<int>(m_links.size()))
        new QTreeWidgetItem(m_list);
    for (std::size_t r = 0; r < m_links.size(); ++r) {
        const int link = m_links[r];
        const std::size_t i = static_cast<std::size_t>(link);
        const engine::Link &l = t.links()[i];
        QTreeWidgetItem *item = m_list->topLevelItem(static_cast<int>(r));
        item->setText(NameColumn, linkTitle(t, link));
        item->setData(NameColumn, kLinkRole, link);
        item->setForeground(NameColumn, style::linkColor(l.kind).darker(140));
        const double u = m_values[r];
        const double bytes = double(loads.bytesUp[i]) + double(loads.bytesDown[i]);
        const QString tip = (m_document->isServing() ? tr("%1\n%2, %3 per decode step")
                                                     : tr("%1\n%2, %3 per step"))
                                    .arg(linkTitle(t, link),
                                         style::linkKindName(l.kind),
                                         QString::fromStdString(engine::formatBytes(bytes)));
        for (int c : {NameColumn, LoadColumn, BytesColumn})
            item->setToolTip(c, tip);
        item->setData(LoadColumn, kLoadRole, u);
        item->setText(LoadColumn, QStringLiteral("%1%").arg(100.0 * u, 0, 'f', u < 0.1 ? 1 : 0));
        // A decode step moves megabytes where a training step moves gigabytes.
        item->setText(BytesColumn,
                      bytes < 1e8 ? QString::fromStdString(engine::formatBytes(bytes))
                                  : QStringLiteral("%1 GB").arg(bytes / 1e9,
                                                                0,
                                                                'f',
                                                                bytes < 1e11 ? 1 : 0));
        item->setTextAlignment(BytesColumn, Qt::AlignRight | Qt::AlignVCenter);
    }
    m_list->setUpdatesEnabled(true);
    syncSelection();
}

void HottestLinksPanel::syncSelection()
{
    const int selected = m_view ? m_view->selectedLink() : -1;
    const QSignalBlocker block(m_list);
    QTreeWidgetItem *current = nullptr;
    for (int r = 0; r < m_list->topLevelItemCount(); ++r)
        if (m_list->topLevelItem(r)->data(NameColumn, kLinkRole).toInt() == selected)
            current = m_list->topLevelItem(r);
    m_list->setCurrentItem(current);
    if (!current)
        m_list->clearSelection();
}

} // namespace railyard
