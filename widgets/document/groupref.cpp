#include "groupref.h"

#include "base/inputerror.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <memory>

namespace railyard {

using engine::Dim;

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("GroupRef", text);
}

} // namespace

Dim dimOf(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return Dim::TP;
    case GroupKind::Cp: return Dim::CP;
    case GroupKind::Ep: return Dim::EP;
    case GroupKind::PpStage: return Dim::PP;
    case GroupKind::DpReplica: return Dim::DP;
    }
    return Dim::TP;
}

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

int groupCount(const engine::RankLayout &ranks, GroupKind kind)
{
    switch (kind) {
    case GroupKind::PpStage: return ranks.size(Dim::PP);
    case GroupKind::DpReplica: return ranks.size(Dim::DP);
    default: return ranks.groupCount(dimOf(kind));
    }
}

int groupOfRank(const engine::RankLayout &ranks, GroupKind kind, int rank)
{
    switch (kind) {
    case GroupKind::PpStage:
    case GroupKind::DpReplica: return ranks.coord(rank, dimOf(kind));
    default: return ranks.groupOf(rank, dimOf(kind));
    }
}

std::vector<int> groupRanks(const engine::RankLayout &ranks, const GroupRef &group)
{
    if (group.index < 0 || group.index >= groupCount(ranks, group.kind))
        return {};
    switch (group.kind) {
    case GroupKind::PpStage:
    case GroupKind::DpReplica: return ranks.ranksAt(dimOf(group.kind), group.index);
    default: return ranks.groupRanks(dimOf(group.kind), group.index);
    }
}

std::vector<int> groupGpus(const engine::RankLayout &ranks, const GroupRef &group)
{
    std::vector<int> gpus = groupRanks(ranks, group);
    for (int &r : gpus)
        r = ranks.gpuOfRank(r);
    return gpus;
}

engine::MappingEdit placeGroup(const engine::Layout &layout,
                               const GroupRef &group,
                               const std::vector<int> &targets)
{
    switch (group.kind) {
    case GroupKind::PpStage:
    case GroupKind::DpReplica:
        return engine::placeCoordinate(layout, dimOf(group.kind), group.index, targets);
    default: return engine::placeGroup(layout, dimOf(group.kind), group.index, targets);
    }
}

engine::MappingEdit makeGroupHere(const engine::Layout &layout,
                                  GroupKind kind,
                                  const std::vector<int> &selected)
{
    if (kind != GroupKind::PpStage && kind != GroupKind::DpReplica)
        return engine::makeGroupHere(layout, dimOf(kind), selected);
    engine::MappingEdit out;
    if (selected.empty()) {
        out.error = "select the GPUs first";
        return out;
    }
    std::unique_ptr<engine::RankLayout> ranks;
    try {
        ranks = std::make_unique<engine::RankLayout>(layout);
    } catch (const engine::InputError &e) {
        out.error = e.what();
        return out;
    }
    const int rank = ranks->rankOfGpu(selected.front());
    if (rank < 0) {
        out.error = "GPU " + std::to_string(selected.front()) + " runs no rank";
        return out;
    }
    return placeGroup(layout, GroupRef{kind, groupOfRank(*ranks, kind, rank)}, selected);
}

std::vector<int> normalizedMapping(std::vector<int> mapping)
{
    for (std::size_t i = 0; i < mapping.size(); ++i)
        if (mapping[i] != static_cast<int>(i))
            return mapping;
    return {};
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
    const engine::ParallelConfig &p = layout.parallel;
    return QStringLiteral("gpus%1-tp%2-cp%3-ep%4-etp%5-pp%6-dp%7-%8")
            .arg(layout.cluster.gpuCount())
            .arg(p.tp)
            .arg(p.cp)
            .arg(p.ep)
            .arg(p.etp.value_or(1))
            .arg(p.pp)
            .arg(layout.dataParallel())
            .arg(QString::fromStdString(p.order));
}

} // namespace railyard
