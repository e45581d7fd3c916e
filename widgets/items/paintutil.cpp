#include "paintutil.h"

#include "scene/levelofdetail.h"

#include "scene/style.h"

#include <QFontMetricsF>
#include <QPainter>

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
    // As large as reads well, as small as still fits the box.
    const double fitW = (rect.width() - 6) / std::max<qsizetype>(4, label.size()) / 0.62;
    const int units = fontUnits(lod, 10, 10, static_cast<int>(std::min(rect.height() * 0.5, fitW)));
    if (units == 0 || label.isEmpty())
        return;
    QFont f = painter->font();
    f.setPixelSize(units);
    f.setBold(kind == DeviceKind::Gpu || kind == DeviceKind::Leaf || kind == DeviceKind::Spine);
    painter->setFont(f);
    painter->setPen(style::deviceText(kind));
    painter->drawText(rect.adjusted(2, 0, -2, 0), Qt::AlignCenter, label);
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

QRectF drawPlateLabel(QPainter *painter,
                      const QPointF &at,
                      const QString &text,
                      double lod,
                      double px,
                      Qt::Alignment anchor,
                      Plate plate)
{
    QFont f = painter->font();
    f.setPixelSize(std::max(1, static_cast<int>(std::lround(px / lod))));
    f.setBold(true);
    painter->setFont(f);
    const QFontMetricsF fm(f);
    const double w = fm.horizontalAdvance(text) + 10 / lod;
    const double h = fm.height() + 4 / lod;
    QRectF r(at.x() - w / 2, at.y() - h / 2, w, h);
    if (anchor & Qt::AlignLeft)
        r.moveLeft(at.x());
    if (anchor & Qt::AlignTop)
        r.moveTop(at.y());
    if (anchor & Qt::AlignBottom)
        r.moveBottom(at.y());
    const bool dark = plate == Plate::Dark;
    painter->setPen(Qt::NoPen);
    painter->setBrush(dark ? QColor(0x1f, 0x29, 0x37, 225) : QColor(255, 255, 255, 225));
    if (dark) {
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->drawRoundedRect(r, 3 / lod, 3 / lod);
    } else {
        painter->drawRect(r);
    }
    painter->setPen(dark ? QColor(Qt::white) : style::kTextDark);
    painter->drawText(r, Qt::AlignCenter, text);
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

void drawLoadBuckets(QPainter *painter, const LoadBuckets &buckets, Detail detail)
{
    for (int step = 1; step <= kLoadSteps; ++step) {
        const auto &lines = buckets[static_cast<std::size_t>(step)];
        if (lines.empty())
            continue;
        painter->setPen(loadPen(stepLoad(step), detail, 1.5));
        painter->drawLines(lines.data(), static_cast<int>(lines.size()));
        paintStats().linkLines += static_cast<int>(lines.size());
    }
}

} // namespace railyard::paint
