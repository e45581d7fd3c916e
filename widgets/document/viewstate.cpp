#include "viewstate.h"

#include "lessonframe.h"

#include <QVariantAnimation>

#include <algorithm>

namespace railyard {

ViewState::ViewState(QObject *parent)
    : QObject(parent)
    , m_animation(new QVariantAnimation(this))
{
    m_animation->setStartValue(0.0);
    m_animation->setEndValue(1.0);
    m_animation->setLoopCount(-1);
    connect(m_animation, &QVariantAnimation::valueChanged, this, [this](const QVariant &v) {
        if (m_playing)
            moveTo(v.toDouble() * m_stepS);
    });
}

ViewState::~ViewState() = default;

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
    Q_EMIT changed(Selection);
}

void ViewState::setSelectedGpus(std::vector<int> gpus)
{
    std::erase_if(gpus, [](int g) { return g < 0; });
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    if (gpus == m_selectedGpus)
        return;
    m_selectedGpus = std::move(gpus);
    Q_EMIT changed(Selection);
}

void ViewState::setSelectedLink(int link)
{
    link = std::max(link, -1);
    if (link == m_selectedLink)
        return;
    m_selectedLink = link;
    Q_EMIT changed(Selection);
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

void ViewState::setStepLength(double seconds)
{
    m_stepS = std::max(0.0, seconds);
    if (m_time > m_stepS)
        moveTo(m_stepS);
    if (m_stepS <= 0 && m_playing)
        pause();
}

void ViewState::moveTo(double seconds)
{
    const double t = std::clamp(seconds, 0.0, m_stepS);
    if (t == m_time)
        return;
    m_time = t;
    Q_EMIT changed(Playback);
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
    Q_EMIT changed(Playback);
}

void ViewState::play()
{
    if (m_playing || m_stepS <= 0)
        return;
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
    m_animation->setDuration(ms);
    m_animation->start();
    if (m_stepS > 0 && m_time > 0)
        m_animation->setCurrentTime(static_cast<int>(m_time / m_stepS * ms));
}

} // namespace railyard
