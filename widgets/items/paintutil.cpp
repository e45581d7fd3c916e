#include "paintutil.h"

#include "scene/levelofdetail.h"

#include "scene/style.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace railyard::paint {

using engine::DeviceKind;

QString deviceLabel(const engine::Topology &t, int id)
{
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    const bool tray = t.shape().nodesPerDomain > 1;
    switch (d.kind) {
    case DeviceKind::Gpu: return QStringLiteral("GPU %1").arg(d.index);
    case DeviceKind::NvSwitch: return QStringLiteral("NVSwitch %1").arg(d.local);
    case DeviceKind::PcieSwitch: return QStringLiteral("PCIe switch %1").arg(d.local);
    case DeviceKind::Cpu:
        return tray ? QStringLiteral("Grace CPU %1").arg(d.local)
                    : QStringLiteral("CPU %1").arg(d.local);
    case DeviceKind::Nic: return QStringLiteral("NIC %1").arg(d.local);
    case DeviceKind::Leaf:
        return t.shape().fabric == engine::FabricKind::SingleSwitch
                       ? QStringLiteral("Switch")
                       : QStringLiteral("Leaf %1").arg(d.index);
    case DeviceKind::Spine: return QStringLiteral("Spine %1").arg(d.index);
    case DeviceKind::Core: return QStringLiteral("Core %1").arg(d.index);
    }
    return QString::fromStdString(t.deviceName(id));
}

namespace {

// The label and shorter forms of it for a box too narrow for the full one: an imported server's
// PCIe switches sit one over each GPU, and "PCIe switch 3" did not fit their boxes (they showed
// no name at all).
QStringList labelForms(DeviceKind kind, const QString &label)
{
    const auto number = [&](const QString &prefix) { return label.mid(prefix.size()); };
    const QString pcie = QStringLiteral("PCIe switch ");
    const QString nvs = QStringLiteral("NVSwitch ");
    if (kind == DeviceKind::PcieSwitch && label.startsWith(pcie))
        return {label,
                QStringLiteral("PCIe sw ") + number(pcie),
                QStringLiteral("sw ") + number(pcie)};
    if (kind == DeviceKind::NvSwitch && label.startsWith(nvs))
        return {label, QStringLiteral("NVS ") + number(nvs)};
    return {label};
}

} // namespace

int fontUnits(double lod, double screenPx, int minUnits, int maxUnits)
{
    const double want = screenPx / std::max(lod, 1e-6);
    const int units = static_cast<int>(std::clamp(want, double(minUnits), double(maxUnits)));
    return units * lod >= 6.0 ? units : 0;
}

void drawDevice(QPainter *painter,
                const QRectF &rect,
                DeviceKind kind,
                const QString &label,
                Detail detail,
                double lod)
{
    const QColor fill = style::deviceFill(kind);
    if (detail != Detail::Labels) {
        painter->fillRect(rect, fill);
        return;
    }
    painter->setPen(QPen(fill.darker(135), 1));
    painter->setBrush(fill);
    painter->drawRoundedRect(rect, 4, 4);
    if (label.isEmpty())
        return;
    // As large as reads well, as small as still fits the box; a shorter name where the full
    // one does not fit.
    QString text;
    int units = 0;
    for (const QString &form : labelForms(kind, label)) {
        const double fitW = (rect.width() - 6) / std::max<qsizetype>(4, form.size()) / 0.62;
        units = fontUnits(lod, 10, 10, static_cast<int>(std::min(rect.height() * 0.5, fitW)));
        text = form;
        if (units > 0)
            break;
    }
    if (units == 0)
        return;
    QFont f = painter->font();
    f.setPixelSize(units);
    f.setBold(kind == DeviceKind::Gpu || kind == DeviceKind::Leaf || kind == DeviceKind::Spine);
    painter->setFont(f);
    painter->setPen(style::deviceText(kind));
    painter->drawText(rect.adjusted(2, 0, -2, 0), Qt::AlignCenter, text);
    ++paintStats().labels;
}

void drawGpu(QPainter *painter,
             const QRectF &rect,
             const QColor &fill,
             const QString &label,
             const QString &caption,
             Detail detail,
             double lod)
{
    if (detail != Detail::Labels) {
        painter->fillRect(rect, fill);
        return;
    }
    painter->setPen(QPen(fill.darker(140), 1));
    painter->setBrush(fill);
    painter->drawRoundedRect(rect, 4, 4);
    if (label.isEmpty())
        return;
    const QColor text = style::textOn(fill);
    const double fitW = (rect.width() - 6) / std::max<qsizetype>(5, label.size()) / 0.62;
    const int units = fontUnits(lod, 10, 10, static_cast<int>(std::min(rect.height() * 0.4, fitW)));
    if (units == 0)
        return;
    QFont f = painter->font();
    f.setPixelSize(units);
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(text);
    // The caption only when it can be read too (at least 6 pixels tall and as wide as the box
    // allows); else the name alone, centred.
    int capUnits = 0;
    if (!caption.isEmpty()) {
        QFont cf = f;
        cf.setBold(false);
        for (int u = std::min(12, static_cast<int>(rect.height() * 0.32)); u * lod >= 6.0; --u) {
            cf.setPixelSize(u);
            if (QFontMetricsF(cf).horizontalAdvance(caption) <= rect.width() - 4) {
                capUnits = u;
                break;
            }
        }
    }
    if (capUnits == 0) {
        painter->drawText(rect.adjusted(2, 0, -2, 0), Qt::AlignCenter, label);
    } else {
        const QRectF top(rect.left() + 2, rect.top() + 2, rect.width() - 4, rect.height() * 0.5);
        const QRectF bottom(rect.left() + 2,
                            rect.top() + rect.height() * 0.5,
                            rect.width() - 4,
                            rect.height() * 0.5 - 2);
        painter->drawText(top, Qt::AlignHCenter | Qt::AlignBottom, label);
        f.setPixelSize(capUnits);
        f.setBold(false);
        painter->setFont(f);
        painter->drawText(bottom, Qt::AlignHCenter | Qt::AlignVCenter, caption);
    }
    ++paintStats().labels;
}

int loadStep(double u)
{
    if (!(u > 0))
        return 0;
    return std::clamp(1 + static_cast<int>(u * kLoadSteps), 1, kLoadSteps);
}

double stepLoad(int step)
{
    return step <= 0 ? 0.0 : (step - 0.5) / kLoadSteps;
}

QPen loadPen(double u, Detail detail, double width)
{
    const QColor c = style::loadColor(u);
    if (detail != Detail::Labels) {
        QPen pen(c, u > 0 ? 1.0 + 2.0 * std::min(u, 1.0) : 0.0);
        pen.setCosmetic(true);
        return pen;
    }
    QPen pen(c, u > 0 ? width + 5.0 * std::min(u, 1.0) : std::max(1.0, width * 0.6));
    pen.setCapStyle(Qt::FlatCap);
    return pen;
}

QPen linkPen(engine::LinkKind kind, Detail detail, double width)
{
    if (detail != Detail::Labels) {
        QPen pen(style::linkColor(kind), 0); // a cosmetic hairline
        return pen;
    }
    QPen pen(style::linkColor(kind), width, style::linkPenStyle(kind));
    pen.setCapStyle(Qt::FlatCap);
    return pen;
}

Plates::Plates(QPainter *painter, Cache *cache)
    : m_painter(painter)
    , m_cache(cache)
    , m_world(painter->worldTransform())
    , m_font(painter->font())
{
    QRectF device(0, 0, painter->device()->width(), painter->device()->height());
    if (painter->hasClipping())
        device = device.intersected(m_world.mapRect(painter->clipBoundingRect()));
    m_visible = m_world.inverted().mapRect(device);
    m_font.setBold(true);
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setRenderHint(QPainter::TextAntialiasing, true);
}

Plates::~Plates()
{
    m_painter->restore();
}

QRectF Plates::draw(const QPointF &at,
                    const QString &text,
                    int px,
                    Qt::Alignment anchor,
                    Style style,
                    const QPointF &offset)
{
    if (px != m_fontPx) {
        m_fontPx = px;
        m_font.setPixelSize(px);
        m_painter->setFont(m_font);
    }
    QStaticText &label = (*m_cache)[qMakePair(px, text)];
    if (label.text().isEmpty()) {
        label.setTextFormat(Qt::PlainText);
        label.setText(text);
        label.prepare(QTransform(), m_font);
    }
    const QSizeF size = label.size();
    const double w = std::round(size.width()) + 10;
    const double h = std::round(size.height()) + 4;
    const QPointF p = m_world.map(at) + offset;
    double x = p.x() - w / 2, y = p.y() - h / 2;
    if (anchor & Qt::AlignLeft)
        x = p.x();
    if (anchor & Qt::AlignTop)
        y = p.y();
    if (anchor & Qt::AlignBottom)
        y = p.y() - h;
    const QRectF r(std::round(x), std::round(y), w, h);
    const bool dark = style == Style::Dark;
    if (dark) {
        m_painter->setPen(Qt::NoPen);
        m_painter->setBrush(QColor(0x1f, 0x29, 0x37, 225));
        m_painter->drawRoundedRect(r, 3, 3);
    } else {
        // Pixel-aligned and square: the fast path for the hundreds of light plates.
        m_painter->fillRect(r, QColor(255, 255, 255, 225));
    }
    m_painter->setPen(dark ? QColor(Qt::white) : style::kTextDark);
    m_painter->drawStaticText(r.topLeft() + QPointF(5, 2), label);
    ++paintStats().titles;
    return r;
}

// Titles smaller than these many pixels are noise, not text: plates name racks and servers
// until their titles reach them.
int rackTitleUnits(double lod)
{
    const int units = fontUnits(lod, 11, 16, 28);
    return units * lod < 9 ? 0 : units;
}

int nodeTitleUnits(double lod)
{
    const int units = fontUnits(lod, 10, 12, 18);
    return units * lod < 8.5 ? 0 : units;
}

void drawLoadBuckets(QPainter *painter, const LoadBuckets &buckets, Detail detail, double dashPhase)
{
    for (int step = 1; step <= kLoadSteps; ++step) {
        const auto &lines = buckets[static_cast<std::size_t>(step)];
        if (lines.empty())
            continue;
        painter->setPen(loadPen(stepLoad(step), detail, 1.5));
        painter->drawLines(lines.data(), static_cast<int>(lines.size()));
        paintStats().linkLines += static_cast<int>(lines.size());
        if (dashPhase >= 0) {
            painter->setPen(dashPen(stepLoad(step), detail, 1.5, dashPhase));
            painter->drawLines(lines.data(), static_cast<int>(lines.size()));
        }
    }
}

QPen dashPen(double u, Detail detail, double width, double dashPhase)
{
    QPen pen = loadPen(u, detail, width);
    pen.setColor(QColor(255, 255, 255, 190));
    pen.setWidthF(pen.isCosmetic() ? std::max(1.0, pen.widthF() * 0.5) : pen.widthF() * 0.4);
    pen.setCapStyle(Qt::FlatCap);
    // A dash and a gap of 3 pen widths; Qt's offset runs against the line, so subtracting
    // moves the dashes from p1 towards p2. Busier lines move faster (the traffic's speed).
    constexpr double kPeriod = 6;
    pen.setDashPattern({3, 3});
    const double moved = dashPhase * (0.5 + std::min(u, 1.0));
    pen.setDashOffset(-(moved - std::floor(moved)) * kPeriod);
    return pen;
}

QRectF visibleRect(QPainter *painter)
{
    QRectF device(0, 0, painter->device()->width(), painter->device()->height());
    if (painter->hasClipping())
        device = device.intersected(painter->worldTransform().mapRect(painter->clipBoundingRect()));
    return painter->worldTransform().inverted().mapRect(device);
}

void appendPath(std::vector<QLineF> &out, const QPolygonF &path, bool reverse)
{
    if (reverse)
        for (int i = path.size() - 1; i > 0; --i)
            out.emplace_back(path[i], path[i - 1]);
    else
        for (int i = 1; i < path.size(); ++i)
            out.emplace_back(path[i - 1], path[i]);
}

} // namespace railyard::paint
