#include "timelinepanel.h"

#include "base/units.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "ganttview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace railyard {

namespace {

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

// The scroll bar's units per step.
constexpr int kScrollUnits = 100000;

} // namespace

TimelinePanel::TimelinePanel(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
    , m_gantt(new GanttView(document, view, this))
    , m_scroll(new QScrollBar(Qt::Horizontal, this))
    , m_play(new QToolButton(this))
    , m_average(new QToolButton(this))
    , m_speed(new QComboBox(this))
    , m_servingTimeline(new QComboBox(this))
    , m_status(new QLabel(this))
{
    setObjectName("TimelinePanel");
    m_play->setObjectName("TimelinePlay");
    m_play->setToolTip(tr("Play the step / pause"));
    m_average->setText(tr("Step average"));
    m_average->setToolTip(tr("Show each link's load averaged over the step"));
    m_speed->setObjectName("TimelineSpeed");
    for (double s : {0.25, 0.5, 1.0, 2.0, 4.0})
        m_speed->addItem(QString::number(s) + QStringLiteral("\u00d7"), s);
    m_speed->setCurrentIndex(2);
    m_servingTimeline->setObjectName("TimelineServing");
    m_servingTimeline->addItem(tr("Decode step"),
                               static_cast<int>(ViewState::ServingTimeline::DecodeStep));
    m_servingTimeline->addItem(tr("One request"),
                               static_cast<int>(ViewState::ServingTimeline::Request));
    m_servingTimeline->setToolTip(tr("Play one decode step of the batch, or one request's life: "
                                     "waiting, prefill, KV transfer, its decode steps"));
    m_servingTimeline->setVisible(document && document->isServing());
    m_servingTimeline->setCurrentIndex(
            view->servingTimeline() == ViewState::ServingTimeline::Request ? 1 : 0);
    connect(m_servingTimeline, &QComboBox::activated, this, [this](int index) {
        m_view->setServingTimeline(static_cast<ViewState::ServingTimeline>(
                m_servingTimeline->itemData(index).toInt()));
    });
    // The running phases can be a long line at scale: the label takes the room it is given and
    // elides the rest (it once widened the window past the screen while playing).
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_scroll->setObjectName("TimelineScroll");
    m_scroll->setToolTip(tr("Pan the zoomed timeline (wheel over the chart zooms, 0 fits)"));
    m_scroll->hide();
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 0);
    bar->addWidget(m_play);
    bar->addWidget(m_speed);
    bar->addWidget(m_servingTimeline);
    bar->addWidget(m_average);
    bar->addWidget(m_status, 1);
    auto *box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    box->addLayout(bar);
    box->addWidget(m_gantt, 1);
    box->addWidget(m_scroll);

    connect(m_play, &QToolButton::clicked, this, [this] {
        if (m_view->isPlaying())
            m_view->pause();
        else
            m_view->play();
    });
    connect(m_average, &QToolButton::clicked, m_view, &ViewState::clearPlaybackTime);
    connect(m_speed, &QComboBox::currentIndexChanged, this, [this] {
        m_view->setSpeed(m_speed->currentData().toDouble());
    });
    connect(m_gantt, &GanttView::viewChanged, this, &TimelinePanel::syncScrollBar);
    connect(m_scroll, &QScrollBar::valueChanged, this, [this](int v) {
        m_gantt->setVisibleStart(double(v) / kScrollUnits * m_view->stepLength());
    });
    // The step's length is the evaluation's: the view state follows it, and says so.
    connect(m_document, &Document::evaluationChanged, this, &TimelinePanel::syncPlayback);
    connect(m_view, &ViewState::changed, this, &TimelinePanel::syncPlayback);
    syncPlayback();
}

TimelinePanel::~TimelinePanel() = default;

QString TimelinePanel::runningText() const
{
    const engine::StepTimeline &tl = m_view->timeline();
    if (m_view->moment().empty() || tl.empty())
        return {};
    QStringList names;
    for (int i : m_view->moment().running) {
        if (static_cast<std::size_t>(i) >= tl.phases.size())
            continue; // a moment of the evaluation before (the view state hears of it next)
        const engine::Phase &p = tl.phases[static_cast<std::size_t>(i)];
        if (p.stage != 0 && tl.stages > 1)
            continue; // stage 0's, for one line; the chart shows every stage's
        names << QString::fromStdString(p.name);
    }
    return names.join(QStringLiteral(" \u00b7 "));
}

void TimelinePanel::syncPlayback()
{
    m_play->setText(m_view->isPlaying() ? tr("Pause") : tr("Play"));
    m_play->setEnabled(m_view->stepLength() > 0);
    const double t = m_view->playbackTime();
    const bool serving = m_document && m_document->isServing();
    const bool request = serving
                         && m_view->servingTimeline() == ViewState::ServingTimeline::Request;
    m_average->setText(serving ? tr("Average") : tr("Step average"));
    if (t < 0 && request)
        m_statusText = tr("One request %1 \u00b7 links show the decode-step average \u00b7 click "
                          "the chart to scrub, wheel to zoom")
                               .arg(seconds(m_view->stepLength()));
    else if (t < 0 && serving)
        m_statusText = tr("Decode step %1 \u00b7 links show its average \u00b7 click the chart "
                          "to scrub, wheel to zoom")
                               .arg(seconds(m_view->stepLength()));
    else if (t < 0)
        m_statusText = tr("Step %1 \u00b7 links show the step average \u00b7 click the chart to "
                          "scrub, wheel to zoom")
                               .arg(seconds(m_view->stepLength()));
    else
        m_statusText = tr("%1 of %2 \u00b7 %3")
                               .arg(seconds(t), seconds(m_view->stepLength()), runningText());
    showStatus();
    syncScrollBar();
    m_gantt->update();
}

void TimelinePanel::showStatus()
{
    const int room = std::max(0, m_status->contentsRect().width());
    m_status->setText(m_status->fontMetrics().elidedText(m_statusText, Qt::ElideRight, room));
    m_status->setToolTip(m_status->text() == m_statusText ? QString() : m_statusText);
}

void TimelinePanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    showStatus();
}

void TimelinePanel::syncScrollBar()
{
    const double step = m_view->stepLength();
    const bool zoomed = m_gantt->zoom() > 1 && step > 0;
    m_scroll->setVisible(zoomed);
    if (!zoomed)
        return;
    const QSignalBlocker block(m_scroll);
    const int page = static_cast<int>(std::lround(m_gantt->visibleSpan() / step * kScrollUnits));
    m_scroll->setRange(0, kScrollUnits - page);
    m_scroll->setPageStep(page);
    m_scroll->setSingleStep(std::max(1, page / 8));
    m_scroll->setValue(static_cast<int>(std::lround(m_gantt->visibleStart() / step * kScrollUnits)));
}

} // namespace railyard
