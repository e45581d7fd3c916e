#include "warningspanel.h"

#include "base/units.h"
#include "document/document.h"
#include "document/groupref.h"

#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace railyard {

namespace {

constexpr int kGpusRole = Qt::UserRole + 1;

QIcon severityIcon(engine::Severity s)
{
    QStyle *style = QApplication::style();
    switch (s) {
    case engine::Severity::Error: return style->standardIcon(QStyle::SP_MessageBoxCritical);
    case engine::Severity::Warning: return style->standardIcon(QStyle::SP_MessageBoxWarning);
    case engine::Severity::Info: return style->standardIcon(QStyle::SP_MessageBoxInformation);
    }
    return {};
}

// Wraps a warning's text over as many lines as the column needs (QTreeView's own word wrap
// sizes rows before it knows the column's width, and elides instead).
class WrappingDelegate : public QStyledItemDelegate
{
public:
    explicit WrappingDelegate(QTreeView *view)
        : QStyledItemDelegate(view)
        , m_view(view)
    {}

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        QSize size = QStyledItemDelegate::sizeHint(option, index);
        if (index.column() != 0)
            return size;
        int depth = 0;
        for (QModelIndex p = index.parent(); p.isValid(); p = p.parent())
            ++depth;
        const int width = m_view->columnWidth(0) - (depth + 1) * m_view->indentation() - 28;
        if (width <= 40)
            return size;
        const QRect r = option.fontMetrics.boundingRect(QRect(0, 0, width, 10000),
                                                        Qt::TextWordWrap,
                                                        index.data().toString());
        size.setHeight(std::max(size.height(), r.height() + 6));
        return size;
    }

    void paint(QPainter *painter,
               const QStyleOptionViewItem &option,
               const QModelIndex &index) const override
    {
        QStyleOptionViewItem o = option;
        o.features |= QStyleOptionViewItem::WrapText;
        o.textElideMode = Qt::ElideNone;
        QStyledItemDelegate::paint(painter, o, index);
    }

private:
    QTreeView *m_view;
};

} // namespace

WarningsPanel::WarningsPanel(QWidget *parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_list(new QTreeWidget(this))
{
    m_summary->setWordWrap(true);
    m_list->setRootIsDecorated(true);
    m_list->setHeaderLabels({tr("Warning"), tr("Cost per step")});
    m_list->header()->setStretchLastSection(false);
    m_list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_list->setWordWrap(true);
    m_list->setUniformRowHeights(false);
    m_list->setTextElideMode(Qt::ElideNone);
    m_list->setItemDelegate(new WrappingDelegate(m_list));
    // Rows are as tall as their wrapped text at the column's width: re-measure on resize.
    connect(m_list->header(), &QHeaderView::sectionResized, m_list, [this] {
        m_list->doItemsLayout();
    });
    m_list->setAlternatingRowColors(true);
    const auto activate = [this](QTreeWidgetItem *item) {
        const QVariant v = item->data(0, kGpusRole);
        if (!v.isValid())
            return;
        std::vector<int> gpus;
        for (const QVariant &g : v.toList())
            gpus.push_back(g.toInt());
        if (!gpus.empty())
            Q_EMIT gpusActivated(gpus);
    };
    connect(m_list, &QTreeWidget::itemClicked, this, activate);
    connect(m_list, &QTreeWidget::itemActivated, this, activate);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_list, 1);
    sync();
}

void WarningsPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    if (document) {
        connect(document, &Document::evaluationChanged, this, &WarningsPanel::sync);
        connect(document, &Document::stackRangeChanged, this, &WarningsPanel::sync);
    }
    sync();
}

void WarningsPanel::sync()
{
    m_list->clear();
    const int before = m_count;
    m_count = 0;
    if (!m_document) {
        m_summary->clear();
        if (before != 0)
            Q_EMIT countChanged(0);
        return;
    }
    // A serving layout's warnings are the serving engine's; their costs are what the message
    // says (per output token, or of the time to first token), not seconds of a step.
    const engine::Evaluation &e = m_document->evaluation();
    const engine::ServingEvaluation *serving = m_document->servingEvaluation();
    const bool priced = m_document->isPriced();
    const std::vector<engine::Warning> &all = serving ? serving->warnings : e.warnings;
    const std::vector<std::string> &assumptions = serving ? serving->assumptions : e.assumptions;
    // A serving warning's cost is per output token or of the time to first token.
    m_list->setHeaderLabels({tr("Warning"), serving ? tr("Cost") : tr("Cost per step")});
    const QString refusal = serving ? tr("The serving workload cannot be priced: %1")
                                    : tr("The step cannot be priced: %1");
    if (!priced) {
        auto *item = new QTreeWidgetItem(m_list);
        item->setIcon(0, severityIcon(engine::Severity::Error));
        item->setText(0, refusal.arg(QString::fromStdString(m_document->pricingError())));
        item->setToolTip(0, item->text(0));
        ++m_count;
    }
    // Worst first: the costliest placement problems at the top.
    std::vector<const engine::Warning *> warnings;
    for (const engine::Warning &w : all)
        warnings.push_back(&w);
    std::stable_sort(warnings.begin(), warnings.end(), [&](const auto *a, const auto *b) {
        if (a->severity != b->severity)
            return static_cast<int>(a->severity) > static_cast<int>(b->severity);
        return a->costS > b->costS;
    });
    for (const engine::Warning *w : warnings) {
        auto *item = new QTreeWidgetItem(m_list);
        item->setIcon(0, severityIcon(w->severity));
        const QString text = QString::fromStdString(w->message);
        item->setText(0, text);
        QString tip = text;
        if (const double cost = w->costS; cost > 0) {
            item->setText(1,
                          QStringLiteral("+") + QString::fromStdString(engine::formatSeconds(cost)));
            item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
            item->setData(1, Qt::UserRole, cost);
            if (!serving && e.ok && e.stepTimeS > 0)
                tip += tr("\nAbout %1 per step, %2% of the step.")
                               .arg(QString::fromStdString(engine::formatSeconds(cost)))
                               .arg(100 * cost / e.stepTimeS, 0, 'f', 1);
        }
        if (!w->gpus.empty()) {
            QVariantList gpus;
            for (int g : w->gpus)
                gpus << g;
            item->setData(0, kGpusRole, gpus);
            tip += tr("\nClick to select the %1 concerned.")
                           .arg(counted(static_cast<int>(w->gpus.size()), tr("GPU"), tr("GPUs")));
        }
        item->setToolTip(0, tip);
        item->setData(0, Qt::UserRole, QString::fromStdString(w->code));
        if (w->severity != engine::Severity::Info)
            ++m_count;
    }
    if (!assumptions.empty()) {
        auto *group = new QTreeWidgetItem(m_list);
        group->setText(0, tr("Where the model is unsure (%1)").arg(assumptions.size()));
        group->setIcon(0, severityIcon(engine::Severity::Info));
        for (const std::string &a : assumptions) {
            auto *item = new QTreeWidgetItem(group);
            item->setText(0, QString::fromStdString(a));
            item->setToolTip(0, item->text(0));
        }
    }
    if (!priced)
        m_summary->setText(serving ? tr("<b>The serving workload cannot be priced.</b>")
                                   : tr("<b>The step cannot be priced.</b>"));
    else if (m_count == 0)
        m_summary->setText(serving ? tr("No placement or load problems: no TP or EP group "
                                        "leaves its NVLink domain, no request queues.")
                                   : tr("No placement problems: every group sits where its "
                                        "traffic is cheapest."));
    else
        m_summary->setText(tr("<b>%1</b>; click one to select its GPUs.")
                                   .arg(counted(m_count, tr("warning"), tr("warnings"))));
    if (m_count != before)
        Q_EMIT countChanged(m_count);
}

} // namespace railyard
