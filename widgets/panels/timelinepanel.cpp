#include "timelinepanel.h"

#include "charts/stepchart.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "units.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace railyard {

using engine::Phase;
using engine::PhaseKind;

namespace {
constexpr int kLabelW = 64; // "stage 12"
constexpr int kPad = 6;

// Lanes under a stage's critical path: one per kind of communication.
int laneOf(const Phase &p)
{
    if (p.exposed)
        return 0;
    switch (p.kind) {
    case PhaseKind::Tp: return 1;
    case PhaseKind::Cp: return 2;
    case PhaseKind::Ep: return 2;
    case PhaseKind::PpP2p: return 3;
    case PhaseKind::Dp: return 4;
    default: return 1;
    }
}
constexpr int kLanes = 5;

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}
} // namespace

GanttView::GanttView(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
{
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QColor GanttView::kindColor(PhaseKind kind)
{
    switch (kind) {
    case PhaseKind::Compute: return StepChart::partColor(StepChart::Compute);
    case PhaseKind::Tp: return StepChart::partColor(StepChart::Tp);
    case PhaseKind::Cp: return StepChart::partColor(StepChart::Cp);
    case PhaseKind::Ep: return StepChart::partColor(StepChart::Ep);
    case PhaseKind::PpP2p: return StepChart::partColor(StepChart::PpP2p);
    case PhaseKind::Dp: return StepChart::partColor(StepChart::Dp);
    case PhaseKind::Optimizer: return StepChart::partColor(StepChart::Optimizer);
    case PhaseKind::Bubble: return StepChart::partColor(StepChart::PpBubble);
    }
    return Qt::gray;
}

double GanttView::xOf(double t) const
{
    const double step = m_document->evaluation().timeline.stepS;
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return kLabelW + kPad + (step > 0 ? t / step : 0.0) * w;
}

double GanttView::timeAt(double x) const
{
    const double step = m_document->evaluation().timeline.stepS;
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return std::clamp((x - kLabelW - kPad) / w, 0.0, 1.0) * step;
}

void GanttView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const engine::StepTimeline &tl = m_document->evaluation().timeline;
    if (tl.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No step to play: the step cannot be priced."));
        return;
    }
    const int stages = std::max(1, tl.stages);
    // Many stages: fewer lanes (critical path and one communication lane).
    const int lanes = stages > 8 ? 2 : kLanes;
    const double rowH = double(height() - 2 * kPad) / stages;
    const double laneH = rowH * 0.85 / (lanes + 1); // the critical path is twice as tall
    const double t = m_view->playbackTime();
    p.setFont(font());
    for (int s = 0; s < stages; ++s) {
        const double top = kPad + s * rowH;
        if (rowH >= 10) {
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRectF(0, top, kLabelW, rowH),
                       Qt::AlignVCenter | Qt::AlignRight,
                       stages > 1 ? tr("stage %1").arg(s) : tr("step"));
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    for (const Phase &ph : tl.phases) {
        const int lane = std::min(laneOf(ph), lanes - 1);
        const double top = kPad + ph.stage * rowH + (lane == 0 ? 0 : laneH * (lane + 1));
        const double h = (lane == 0 ? 2 * laneH : laneH) - 1;
        const double x0 = xOf(ph.start), x1 = std::max(xOf(ph.end), x0 + 1);
        QColor c = kindColor(ph.kind);
        const bool running = t >= 0 && ph.start <= t && t < ph.end;
        if (t >= 0 && !running)
            c.setAlphaF(0.45);
        p.fillRect(QRectF(x0, top, x1 - x0, h), c);
        if (running && x1 - x0 > 2) {
            p.setPen(QPen(palette().color(QPalette::Text), 1.5));
            p.drawRect(QRectF(x0, top, x1 - x0, h));
        }
    }
    if (t >= 0) {
        const double x = xOf(t);
        p.setPen(QPen(QColor(0xd0, 0x1c, 0x1c), 2));
        p.drawLine(QPointF(x, 0), QPointF(x, height()));
    }
}

void GanttView::mousePressEvent(QMouseEvent *e)
{
    m_view->setPlaybackTime(timeAt(e->position().x()));
}

void GanttView::mouseMoveEvent(QMouseEvent *e)
{
    if (e->buttons() & Qt::LeftButton)
        m_view->setPlaybackTime(timeAt(e->position().x()));
}

TimelinePanel::TimelinePanel(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
    , m_gantt(new GanttView(document, view, this))
    , m_play(new QToolButton(this))
    , m_average(new QToolButton(this))
    , m_speed(new QComboBox(this))
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
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 0);
    bar->addWidget(m_play);
    bar->addWidget(m_speed);
    bar->addWidget(m_average);
    bar->addWidget(m_status, 1);
    auto *box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    box->addLayout(bar);
    box->addWidget(m_gantt, 1);

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
    connect(m_document, &Document::evaluationChanged, this, &TimelinePanel::syncEvaluation);
    connect(m_view, &ViewState::changed, this, &TimelinePanel::syncPlayback);
    syncEvaluation();
}

TimelinePanel::~TimelinePanel() = default;

void TimelinePanel::syncEvaluation()
{
    m_view->setStepLength(m_document->evaluation().timeline.stepS);
    syncPlayback();
}

QString TimelinePanel::runningText() const
{
    const engine::StepTimeline &tl = m_document->evaluation().timeline;
    const double t = m_view->playbackTime();
    if (t < 0 || tl.empty())
        return {};
    QStringList names;
    for (int i : tl.runningAt(t)) {
        const Phase &p = tl.phases[static_cast<std::size_t>(i)];
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
    if (t < 0)
        m_status->setText(tr("Step %1 \u00b7 links show the step average \u00b7 click the chart "
                             "to scrub")
                                  .arg(seconds(m_view->stepLength())));
    else
        m_status->setText(tr("%1 of %2 \u00b7 %3")
                                  .arg(seconds(t), seconds(m_view->stepLength()), runningText()));
    m_gantt->update();
}

} // namespace railyard
