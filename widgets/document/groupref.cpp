#include "groupref.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>

namespace railyard {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("GroupRef", text);
}

} // namespace

QString kindNoun(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return tr("TP group");
    case GroupKind::Cp: return tr("CP group");
    case GroupKind::Ep: return tr("EP group");
    case GroupKind::PpStage: return tr("PP stage");
    case GroupKind::DpReplica: return tr("DP replica");
    }
    return {};
}

QString kindLabel(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return tr("TP");
    case GroupKind::Cp: return tr("CP");
    case GroupKind::Ep: return tr("EP");
    case GroupKind::PpStage: return tr("PP stage");
    case GroupKind::DpReplica: return tr("DP replica");
    }
    return {};
}

QString servingKindNoun(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return tr("TP group");
    case GroupKind::Cp: return tr("Prefill/decode pool");
    case GroupKind::Ep: return tr("EP group");
    case GroupKind::PpStage: return tr("PP stage");
    case GroupKind::DpReplica: return tr("Replica");
    }
    return {};
}

QString servingKindLabel(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return tr("TP");
    case GroupKind::Cp: return tr("pool");
    case GroupKind::Ep: return tr("EP");
    case GroupKind::PpStage: return tr("PP");
    case GroupKind::DpReplica: return tr("replica");
    }
    return {};
}

engine::ServingGpuGroups::Kind servingKind(GroupKind kind)
{
    using K = engine::ServingGpuGroups;
    switch (kind) {
    case GroupKind::Tp: return K::Tp;
    case GroupKind::Cp: return K::Pool;
    case GroupKind::Ep: return K::Ep;
    case GroupKind::PpStage: return K::Stage;
    case GroupKind::DpReplica: return K::Replica;
    }
    return K::Tp;
}

QString kindKey(GroupKind kind)
{
    return QString::fromLatin1(engine::toString(dimOf(kind)));
}

std::optional<GroupKind> kindFromKey(const QString &key)
{
    const QString k = key.trimmed().toLower();
    for (GroupKind kind : kAllGroupKinds)
        if (k == kindKey(kind))
            return kind;
    return std::nullopt;
}

QString groupName(const GroupRef &group)
{
    return kindNoun(group.kind) + QLatin1Char(' ') + QString::number(group.index);
}

QString counted(int n, const QString &one, const QString &many)
{
    return QStringLiteral("%1 %2").arg(QLocale().toString(n), n == 1 ? one : many);
}

QString gpuListText(std::vector<int> gpus)
{
    if (gpus.empty())
        return tr("no GPUs");
    if (gpus.size() == 1)
        return tr("GPU %1").arg(gpus.front());
    std::sort(gpus.begin(), gpus.end());
    QStringList ranges;
    std::size_t i = 0;
    while (i < gpus.size()) {
        std::size_t j = i;
        while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1)
            ++j;
        ranges << (j == i ? QString::number(gpus[i])
                          : QStringLiteral("%1\u2013%2").arg(gpus[i]).arg(gpus[j]));
        i = j + 1;
    }
    constexpr int kShown = 4;
    if (ranges.size() > kShown) {
        const auto more = ranges.size() - kShown;
        ranges = ranges.mid(0, kShown);
        return tr("GPUs %1 and %2 more").arg(ranges.join(QStringLiteral(", "))).arg(more);
    }
    return tr("GPUs %1").arg(ranges.join(QStringLiteral(", ")));
}

QString jobSignature(const engine::Layout &layout)
{
    return QString::fromStdString(engine::jobId(layout));
}

} // namespace railyard
