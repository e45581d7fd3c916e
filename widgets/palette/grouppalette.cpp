#include "grouppalette.h"

#include "document/document.h"
#include "document/viewstate.h"
#include "groupchipmodel.h"
#include "layout/parallel.h"
#include "scene/clusterscene.h"
#include "scene/style.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPainter>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QToolButton>
#include <QVBoxLayout>

namespace railyard {

namespace {

// A chip: a rounded box in the group's colour with its name.
class ChipDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter,
               const QStyleOptionViewItem &option,
               const QModelIndex &index) const override
    {
        const QColor fill = index.data(GroupChipModel::ColourRole).value<QColor>();
        const QRectF r = QRectF(option.rect).adjusted(2, 2, -2, -2);
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, true);
        const bool selected = option.state & QStyle::State_Selected;
        const bool hovered = option.state & QStyle::State_MouseOver;
        painter->setPen(QPen(selected ? style::kHighlight : fill.darker(140), selected ? 2.5 : 1));
        painter->setBrush(hovered ? fill.lighter(112) : fill);
        painter->drawRoundedRect(r, 6, 6);
        QFont f = option.font;
        f.setBold(true);
        painter->setFont(f);
        painter->setPen(style::textOn(fill));
        painter->drawText(r, Qt::AlignCenter, index.data(Qt::DisplayRole).toString());
        painter->restore();
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &) const override
    {
        QFont f = option.font;
        f.setBold(true);
        const QFontMetrics fm(f);
        // Wide enough for the longest name, so the chips line up in a grid.
        return QSize(fm.horizontalAdvance(QStringLiteral("DP replica 0000")) + 16, fm.height() + 14);
    }
};

} // namespace

GroupPalette::GroupPalette(QWidget *parent)
    : QWidget(parent)
    , m_model(new GroupChipModel(this))
    , m_filter(new QSortFilterProxyModel(this))
    , m_find(new QLineEdit(this))
    , m_chips(new QListView(this))
    , m_summary(new QLabel(this))
{
    m_filter->setSourceModel(m_model);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);

    auto *kinds = new QButtonGroup(this);
    auto *row = new QHBoxLayout;
    row->setSpacing(2);
    for (GroupKind kind : kAllGroupKinds) {
        auto *b = new QToolButton(this);
        b->setText(kindLabel(kind));
        b->setCheckable(true);
        b->setAutoRaise(false);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        kinds->addButton(b, static_cast<int>(kind));
        row->addWidget(b);
        m_buttons[static_cast<std::size_t>(kind)] = b;
    }
    m_buttons[0]->setChecked(true);
    connect(kinds, &QButtonGroup::idClicked, this, [this](int id) {
        setKind(static_cast<GroupKind>(id));
    });

    m_find->setPlaceholderText(tr("Find a group by number"));
    m_find->setClearButtonEnabled(true);
    connect(m_find, &QLineEdit::textChanged, this, [this](const QString &text) {
        const QString t = text.trimmed();
        bool number = false;
        t.toInt(&number);
        // A number finds that group exactly; words match anywhere in the name.
        m_filter->setFilterRegularExpression(
                number ? QRegularExpression(QStringLiteral("\\b%1$").arg(t))
                       : QRegularExpression(QRegularExpression::escape(t),
                                            QRegularExpression::CaseInsensitiveOption));
    });

    m_chips->setModel(m_filter);
    m_chips->setItemDelegate(new ChipDelegate(m_chips));
    m_chips->setViewMode(QListView::ListMode);
    m_chips->setFlow(QListView::LeftToRight);
    m_chips->setWrapping(true);
    m_chips->setResizeMode(QListView::Adjust);
    m_chips->setUniformItemSizes(true);
    m_chips->setSpacing(2);
    m_chips->setMouseTracking(true);
    m_chips->setSelectionMode(QAbstractItemView::SingleSelection);
    m_chips->setDragEnabled(true);
    m_chips->setDragDropMode(QAbstractItemView::DragOnly);
    m_chips->setDefaultDropAction(Qt::MoveAction);
    connect(m_chips, &QListView::clicked, this, [this](const QModelIndex &index) {
        Q_EMIT groupActivated(m_model->group(m_filter->mapToSource(index)));
    });

    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    auto *hint = new QLabel(tr("Drag a chip onto a GPU, a server or a rack; drag a GPU onto "
                               "another to swap them; Shift-drag to select GPUs."),
                            this);
    hint->setWordWrap(true);
    hint->setStyleSheet(QStringLiteral("color: #5b6675;"));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(m_summary);
    layout->addWidget(m_find);
    layout->addWidget(m_chips, 1);
    layout->addWidget(hint);
    setEnabled(false);
}

void GroupPalette::setScene(ClusterScene *scene)
{
    if (m_scene) {
        disconnect(m_scene, nullptr, this, nullptr);
        disconnect(m_scene->viewState(), nullptr, this, nullptr);
    }
    m_scene = scene;
    m_model->setScene(scene);
    setEnabled(scene != nullptr);
    if (!scene)
        return;
    connect(scene, &ClusterScene::placementChanged, this, &GroupPalette::sync);
    connect(scene->viewState(), &ViewState::changed, this, [this](ViewState::Changes what) {
        if (!(what & ViewState::Colouring))
            return;
        if (m_scene && m_scene->colourBy())
            setKind(*m_scene->colourBy());
        else
            sync();
    });
    if (scene->colourBy())
        m_model->setKind(*scene->colourBy());
    sync();
}

GroupKind GroupPalette::kind() const
{
    return m_model->kind();
}

QAbstractButton *GroupPalette::kindButton(GroupKind kind) const
{
    return m_buttons[static_cast<std::size_t>(kind)];
}

void GroupPalette::setKind(GroupKind kind)
{
    m_model->setKind(kind);
    // The canvas takes the chips' colours.
    if (m_scene && m_scene->colourBy() != kind)
        m_scene->setColourBy(kind);
    sync();
}

void GroupPalette::sync()
{
    m_model->refresh();
    syncButtons();
    const engine::RankLayout *ranks = m_scene ? m_scene->ranks() : nullptr;
    const GroupKind kind = m_model->kind();
    // A serving layout's chips are the serving engine's groups (each pool's TP and EP groups,
    // stages, replicas, the pools), numbered as the canvas colours them.
    const engine::Layout *layout = m_scene ? &m_scene->document()->layout() : nullptr;
    const bool serving = layout && layout->serving;
    m_buttons[static_cast<std::size_t>(GroupKind::Cp)]->setText(
            serving ? servingKindLabel(GroupKind::Cp) : kindLabel(GroupKind::Cp));
    if (serving) {
        const engine::ServingGpuGroups *s = m_scene->document()->servingGroups();
        const int count = m_model->rowCount();
        m_chips->setVisible(count > 0);
        if (!s || !s->ok()) {
            m_summary->setText(
                    tr("<i>The serving pools cannot be placed: %1</i>")
                            .arg(s ? QString::fromStdString(s->error).toHtmlEscaped() : QString()));
            return;
        }
        // Mid-sentence: "2 prefill/decode pools", "18 replicas" ("TP group" keeps its capitals).
        QString noun = servingKindNoun(kind);
        if (noun.size() > 1 && noun.at(1).isLower())
            noun[0] = noun.at(0).toLower();
        if (count == 0) {
            m_summary->setText(tr("This deployment has no %1s.").arg(noun));
            return;
        }
        const int size = m_model->index(0).data(GroupChipModel::GpuCountRole).toInt();
        m_summary->setText(
                tr("<b>%1</b>%2 as the serving engine places them")
                        .arg(counted(count, noun, noun + tr("s")),
                             kind == GroupKind::Cp
                                     ? QString()
                                     : tr(" of %1 each").arg(counted(size, tr("GPU"), tr("GPUs")))));
        return;
    }
    m_chips->setVisible(true);
    if (!ranks) {
        m_summary->setText(tr("<i>The parallel sizes do not fill the cluster: fix them in the "
                              "Workload panel to place groups.</i>"));
        return;
    }
    const int count = groupCount(*ranks, kind);
    const int size = static_cast<int>(groupRanks(*ranks, GroupRef{kind, 0}).size());
    m_summary->setText(tr("<b>%1</b> of %2 each")
                               .arg(counted(count, kindNoun(kind), kindNoun(kind) + tr("s")),
                                    counted(size, tr("GPU"), tr("GPUs"))));
}

std::vector<int> GroupPalette::groupGpus(const GroupRef &group) const
{
    return m_model->gpus(group);
}

void GroupPalette::syncButtons()
{
    const engine::RankLayout *ranks = m_scene ? m_scene->ranks() : nullptr;
    const engine::ServingGpuGroups *serving = m_scene ? m_scene->document()->servingGroups()
                                                      : nullptr;
    for (GroupKind kind : kAllGroupKinds) {
        QAbstractButton *b = m_buttons[static_cast<std::size_t>(kind)];
        b->setChecked(kind == m_model->kind());
        if (serving) {
            const int count = serving->ok() ? serving->count[servingKind(kind)] : 0;
            b->setToolTip(tr("%1: colour the GPUs by them and drag them")
                                  .arg(counted(count,
                                               servingKindNoun(kind),
                                               servingKindNoun(kind) + tr("s"))));
            continue;
        }
        if (!ranks) {
            b->setToolTip({});
            continue;
        }
        const int count = groupCount(*ranks, kind);
        const int size = static_cast<int>(groupRanks(*ranks, GroupRef{kind, 0}).size());
        b->setToolTip(tr("%1 of %2: colour the GPUs by them and drag them")
                              .arg(counted(count, kindNoun(kind), kindNoun(kind) + tr("s")),
                                   counted(size, tr("GPU"), tr("GPUs"))));
    }
}

} // namespace railyard
