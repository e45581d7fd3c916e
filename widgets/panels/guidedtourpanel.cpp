#include "guidedtourpanel.h"

#include "base/inputerror.h"

#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace railyard {

namespace {

QString html(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

GuidedTourPanel::GuidedTourPanel(QWidget *parent)
    : QWidget(parent)
    , m_list(new QListWidget(this))
    , m_text(new QTextBrowser(this))
    , m_buttons(new QVBoxLayout)
{
    m_list->setObjectName(QStringLiteral("tourList"));
    m_list->setToolTip(tr("Choose a scenario to open its layout"));
    m_list->setWordWrap(true);
    m_text->setObjectName(QStringLiteral("tourText"));
    m_text->setOpenLinks(false);
    m_text->setFrameShape(QFrame::NoFrame);

    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    m_buttons->setSpacing(2);
    lowerLayout->addLayout(m_buttons);
    lowerLayout->addWidget(m_text, 1);

    // The list above, the chosen scenario's text below; either can take more room.
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_list);
    split->addWidget(lower);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        showScenario(row);
        if (row >= 0 && row < scenarioCount())
            Q_EMIT openLayoutRequested(layoutPath(row, 0));
    });
    load(defaultTourFile(), defaultLayoutFolder());
}

QString GuidedTourPanel::defaultTourFile()
{
    return QStringLiteral(":/tour/scenarios.json");
}

QString GuidedTourPanel::defaultLayoutFolder()
{
    return QStringLiteral(":/layouts");
}

bool GuidedTourPanel::load(const QString &tourFile, const QString &layoutFolder)
{
    m_list->blockSignals(true);
    m_list->clear();
    m_list->blockSignals(false);
    m_scenarios.clear();
    m_layoutFolder = layoutFolder;
    m_error.clear();
    QFile f(tourFile);
    if (!f.open(QIODevice::ReadOnly)) {
        m_error = tr("%1: cannot be read (%2)").arg(tourFile, f.errorString());
    } else {
        try {
            m_scenarios = engine::parseTour(f.readAll().toStdString(), tourFile.toStdString());
        } catch (const engine::InputError &e) {
            m_error = QString::fromStdString(e.what());
        }
    }
    m_list->blockSignals(true);
    for (std::size_t i = 0; i < m_scenarios.size(); ++i)
        m_list->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(
                QString::fromStdString(m_scenarios[i].title)));
    m_list->blockSignals(false);
    // Room for every title without scrolling (eight scenarios), within reason.
    int rows = 2 * m_list->frameWidth() + m_list->fontMetrics().height(); // a title may wrap
    for (int i = 0; i < m_list->count(); ++i)
        rows += m_list->sizeHintForRow(i);
    m_list->setMinimumHeight(std::min(rows, 12 * m_list->fontMetrics().height()));
    showScenario(-1);
    return m_error.isEmpty();
}

const engine::TourScenario &GuidedTourPanel::scenario(int index) const
{
    return m_scenarios.at(static_cast<std::size_t>(index));
}

QString GuidedTourPanel::layoutPath(int index, int layout) const
{
    const auto &layouts = scenario(index).layouts;
    return m_layoutFolder + QLatin1Char('/')
           + QString::fromStdString(layouts.at(static_cast<std::size_t>(layout)).file);
}

void GuidedTourPanel::selectScenario(int index)
{
    if (index == m_list->currentRow() && index >= 0 && index < scenarioCount())
        Q_EMIT openLayoutRequested(layoutPath(index, 0)); // chosen again: open it again
    else
        m_list->setCurrentRow(index);
}

int GuidedTourPanel::currentScenario() const
{
    return m_list->currentRow();
}

QPushButton *GuidedTourPanel::openButton(int layout) const
{
    return layout >= 0 && layout < static_cast<int>(m_openButtons.size())
                   ? m_openButtons[static_cast<std::size_t>(layout)]
                   : nullptr;
}

void GuidedTourPanel::showScenario(int index)
{
    for (QPushButton *b : m_openButtons)
        delete b;
    m_openButtons.clear();
    if (!m_error.isEmpty()) {
        m_text->setHtml(tr("<p><b>The guided tour could not be loaded.</b></p><p>%1</p>")
                                .arg(m_error.toHtmlEscaped()));
        return;
    }
    if (index < 0 || index >= scenarioCount()) {
        m_text->setHtml(tr("<p>Choose a scenario above. Each opens a layout that shows one idea "
                           "of the seed article, says what to try and what to look for, and "
                           "what the model assumes in getting its numbers.</p>"));
        return;
    }
    const engine::TourScenario &s = scenario(index);
    const bool comparison = s.layouts.size() > 1;
    for (std::size_t k = 0; k < s.layouts.size(); ++k) {
        auto *b = new QPushButton(
                comparison ? tr("Open %1").arg(QString::fromStdString(s.layouts[k].label))
                           : tr("Open again: %1").arg(QString::fromStdString(s.layouts[k].label)),
                this);
        b->setObjectName(QStringLiteral("tourOpen%1").arg(k));
        b->setToolTip(QString::fromStdString(s.layouts[k].file));
        b->setStyleSheet(QStringLiteral("text-align: left; padding: 3px 6px;"));
        const QString path = layoutPath(index, static_cast<int>(k));
        connect(b, &QPushButton::clicked, this, [this, path] { Q_EMIT openLayoutRequested(path); });
        m_buttons->addWidget(b);
        m_openButtons.push_back(b);
    }
    m_text->setHtml(tr("<h3>%1</h3><p>%2</p>"
                       "<p><b>Try:</b> %3</p>"
                       "<p><b>Look for:</b> %4</p>"
                       "<p style='color:#555'><b>What the model assumes:</b> %5</p>")
                            .arg(html(s.title),
                                 html(s.intro),
                                 html(s.tryThis),
                                 html(s.lookFor),
                                 html(s.assumes)));
}

} // namespace railyard
