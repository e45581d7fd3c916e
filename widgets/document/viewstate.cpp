#include "viewstate.h"

#include "base/jsoncursor.h"
#include "document.h"
#include "lessonframe.h"

#include <QVariantAnimation>

#include <algorithm>
#include <cmath>

namespace railyard {

ViewState::ViewState(Document *document, QObject *parent)
    : QObject(parent)
    , m_document(document)
    , m_animation(new QVariantAnimation(this))
{
    connect(m_animation, &QVariantAnimation::valueChanged, this, [this](const QVariant &v) {
        if (m_configuring)
            return;
        if (m_playing)
            moveTo(v.toDouble() * m_stepS);
        if (const int step = static_cast<int>(std::floor(v.toDouble()));
            m_lessonPlaying && step != m_lessonStep) {
            m_lessonStep = step;
            Q_EMIT changed(LessonPlay);
        }
    });
    connect(m_animation, &QAbstractAnimation::finished, this, [this] {
        if (m_lessonPlaying) {
            m_lessonPlaying = false;
            Q_EMIT changed(LessonPlay);
        }
    });
    if (document) {
        connect(document, &Document::evaluationChanged, this, &ViewState::syncEvaluation);
        connect(this, &ViewState::changed, this, &ViewState::keepDocumentView);
        m_stepS = std::max(0.0, timeline().stepS);
    }
}

ViewState::~ViewState() = default;

Document *ViewState::document() const
{
    return m_document;
}

QAbstractAnimation *ViewState::driver() const
{
    return m_animation;
}

void ViewState::readLayoutView(const engine::Json &view)
{
    if (!view.is_object())
        return;
    if (const auto it = view.find("color_by"); it != view.end() && it->is_string())
        setColourBy(kindFromKey(QString::fromStdString(it->get<std::string>())));
    if (const auto it = view.find("link_load"); it != view.end() && it->is_boolean())
        setLinkLoad(it->get<bool>());
}

void ViewState::writeLayoutView(engine::Json &view) const
{
    if (!view.is_object())
        view = engine::Json::object();
    view["color_by"] = m_colourBy ? kindKey(*m_colourBy).toStdString() : std::string("none");
    view["link_load"] = m_linkLoad;
}

void ViewState::keepDocumentView(Changes what)
{
    // What the file says of the colouring follows what is shown, so that whatever writes the
    // document (a save, an autosave) writes the colouring of now.
    if (what & (Colouring | LinkLoad))
        writeDocumentView();
}

void ViewState::writeDocumentView() const
{
    if (!m_document)
        return;
    engine::Json view = m_document->layout().view.get();
    writeLayoutView(view);
    m_document->setView(view);
}

void ViewState::syncEvaluation()
{
    // A new evaluation: another step length, other loads at the same moment.
    m_stepS = std::max(0.0, timeline().stepS);
    if (m_stepS <= 0 && m_playing)
        pause();
    if (m_time > m_stepS) {
        m_time = m_stepS;
        syncMoment(true);
        Q_EMIT changed(Playback | Moment);
    } else if (syncMoment(true)) {
        Q_EMIT changed(Moment);
    }
}

bool ViewState::syncMoment(bool fresh)
{
    if (!m_document)
        return false;
    return engine::moveMoment(m_moment,
                              timeline(),
                              m_document->topology(),
                              m_time,
                              kBusiestLinks,
                              fresh);
}

const engine::StepTimeline &ViewState::timeline() const
{
    static const engine::StepTimeline none;
    if (!m_document)
        return none;
    if (const engine::ServingEvaluation *s = m_document->servingEvaluation();
        s && m_servingTimeline == ServingTimeline::Request)
        return s->requestTimeline;
    return m_document->timeline();
}

void ViewState::setServingTimeline(ServingTimeline which)
{
    if (which == m_servingTimeline)
        return;
    m_servingTimeline = which;
    // Another timeline: another length; the moment starts over at its average.
    if (m_playing)
        pause();
    m_stepS = std::max(0.0, timeline().stepS);
    m_time = -1;
    syncMoment(true);
    Q_EMIT changed(Timeline | Playback | Moment);
}

void ViewState::setColourBy(std::optional<GroupKind> kind)
{
    if (kind == m_colourBy)
        return;
    m_colourBy = kind;
    Q_EMIT changed(Colouring);
}

void ViewState::setLinkLoad(bool on)
{
    if (on == m_linkLoad)
        return;
    m_linkLoad = on;
    Q_EMIT changed(LinkLoad);
}

void ViewState::setSelectedDevice(int device)
{
    device = std::max(device, -1);
    if (device == m_selectedDevice)
        return;
    m_selectedDevice = device;
    Q_EMIT changed(SelectedDevice);
}

void ViewState::setSelectedGpus(std::vector<int> gpus)
{
    std::erase_if(gpus, [](int g) { return g < 0; });
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    if (gpus == m_selectedGpus)
        return;
    m_selectedGpus = std::move(gpus);
    Q_EMIT changed(SelectedGpus);
}

void ViewState::setSelectedLink(int link)
{
    link = std::max(link, -1);
    if (link == m_selectedLink)
        return;
    m_selectedLink = link;
    Q_EMIT changed(SelectedLink);
}

void ViewState::setGraphOverlay(std::optional<GraphOverlay> overlay)
{
    if (!overlay && !m_graph)
        return;
    if (overlay) {
        const int graphs = static_cast<int>(overlay->graphs.size());
        overlay->graph = std::clamp(overlay->graph, 0, std::max(0, graphs - 1));
        const int channels = graphs > 0 ? static_cast<int>(
                                     overlay->graphs[std::size_t(overlay->graph)].channels.size())
                                        : 0;
        if (overlay->channel >= channels)
            overlay->channel = -1;
    }
    m_graph = std::move(overlay);
    Q_EMIT changed(NcclGraph);
}

void ViewState::setGraphOverlayGraph(int graph)
{
    if (!m_graph || graph < 0 || graph >= static_cast<int>(m_graph->graphs.size())
        || (graph == m_graph->graph && m_graph->channel < 0))
        return;
    m_graph->graph = graph;
    m_graph->channel = -1;
    Q_EMIT changed(NcclGraph);
}

void ViewState::setGraphOverlayChannel(int channel)
{
    if (!m_graph || m_graph->graphs.empty())
        return;
    const int channels = static_cast<int>(
            m_graph->graphs[static_cast<std::size_t>(m_graph->graph)].channels.size());
    if (channel < 0 || channel >= channels)
        channel = -1;
    if (channel == m_graph->channel)
        return;
    m_graph->channel = channel;
    Q_EMIT changed(NcclGraph);
}

void ViewState::setGraphOverlayVisible(bool visible)
{
    if (!m_graph || visible == m_graph->visible)
        return;
    m_graph->visible = visible;
    Q_EMIT changed(NcclGraph);
}

void ViewState::setLesson(std::shared_ptr<const LessonFrame> frame)
{
    if (!frame && !m_lesson)
        return;
    m_lesson = std::move(frame);
    Q_EMIT changed(Lesson);
}

void ViewState::setHoveredLink(int link)
{
    link = std::max(link, -1);
    if (link == m_hoveredLink)
        return;
    m_hoveredLink = link;
    Q_EMIT changed(Hover);
}

void ViewState::moveTo(double seconds)
{
    const double t = std::clamp(seconds, 0.0, m_stepS);
    if (t == m_time)
        return;
    m_time = t;
    Q_EMIT changed(syncMoment(false) ? Playback | Moment : Changes(Playback));
}

void ViewState::setPlaybackTime(double seconds)
{
    if (m_playing)
        pause();
    moveTo(seconds);
}

void ViewState::clearPlaybackTime()
{
    if (m_playing)
        pause();
    if (m_time < 0)
        return;
    m_time = -1;
    Q_EMIT changed(syncMoment(false) ? Playback | Moment : Changes(Playback));
}

void ViewState::playLesson(int from, int last)
{
    pause();
    m_animation->stop();
    m_lessonStep = from;
    if (last <= from) {
        stopLesson();
        return;
    }
    m_configuring = true;
    m_animation->setStartValue(double(from));
    m_animation->setEndValue(double(last));
    m_animation->setLoopCount(1);
    m_animation->setDuration((last - from) * kLessonStepMs);
    m_configuring = false;
    m_lessonPlaying = true;
    m_animation->start();
    Q_EMIT changed(LessonPlay);
}

void ViewState::stopLesson()
{
    if (!m_lessonPlaying)
        return;
    m_lessonPlaying = false;
    m_animation->stop();
    Q_EMIT changed(LessonPlay);
}

void ViewState::play()
{
    if (m_playing || m_stepS <= 0)
        return;
    stopLesson();
    m_playing = true;
    restartAnimation();
    Q_EMIT changed(Playing);
}

void ViewState::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_animation->stop();
    Q_EMIT changed(Playing);
}

void ViewState::setSpeed(double speed)
{
    speed = std::clamp(speed, 0.05, 20.0);
    if (speed == m_speed)
        return;
    m_speed = speed;
    if (m_playing)
        restartAnimation();
    Q_EMIT changed(Playing);
}

void ViewState::restartAnimation()
{
    // From the current moment on, at the current speed.
    m_animation->stop();
    const int ms = std::max(1, static_cast<int>(kWallSeconds / m_speed * 1000));
    m_configuring = true;
    m_animation->setStartValue(0.0);
    m_animation->setEndValue(1.0);
    m_animation->setLoopCount(-1);
    m_animation->setDuration(ms);
    m_configuring = false;
    m_animation->start();
    if (m_stepS > 0 && m_time > 0)
        m_animation->setCurrentTime(static_cast<int>(m_time / m_stepS * ms));
}

} // namespace railyard
