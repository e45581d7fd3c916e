#include "groupmime.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>

namespace railyard::mime {

namespace {

std::optional<QJsonObject> read(const QMimeData *data, const char *type)
{
    if (!data || !data->hasFormat(QLatin1String(type)))
        return std::nullopt;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(data->data(QLatin1String(type)), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return std::nullopt;
    return doc.object();
}

} // namespace

QMimeData *encodeGroup(const GroupRef &group, const QString &job)
{
    auto *data = new QMimeData;
    const QJsonObject o{{QStringLiteral("kind"), kindKey(group.kind)},
                        {QStringLiteral("index"), group.index},
                        {QStringLiteral("job"), job}};
    data->setData(QLatin1String(kGroupType), QJsonDocument(o).toJson(QJsonDocument::Compact));
    // Dropped into a text editor, a chip reads as its name.
    data->setText(groupName(group));
    return data;
}

QMimeData *encodeGpu(int gpu, const QString &job)
{
    auto *data = new QMimeData;
    const QJsonObject o{{QStringLiteral("gpu"), gpu}, {QStringLiteral("job"), job}};
    data->setData(QLatin1String(kGpuType), QJsonDocument(o).toJson(QJsonDocument::Compact));
    data->setText(QStringLiteral("GPU %1").arg(gpu));
    return data;
}

std::optional<GroupDrag> decodeGroup(const QMimeData *data)
{
    const auto o = read(data, kGroupType);
    if (!o)
        return std::nullopt;
    const auto kind = kindFromKey(o->value(QStringLiteral("kind")).toString());
    const QJsonValue index = o->value(QStringLiteral("index"));
    if (!kind || !index.isDouble() || index.toInt(-1) < 0)
        return std::nullopt;
    return GroupDrag{GroupRef{*kind, index.toInt()}, o->value(QStringLiteral("job")).toString()};
}

std::optional<GpuDrag> decodeGpu(const QMimeData *data)
{
    const auto o = read(data, kGpuType);
    if (!o)
        return std::nullopt;
    const QJsonValue gpu = o->value(QStringLiteral("gpu"));
    if (!gpu.isDouble() || gpu.toInt(-1) < 0)
        return std::nullopt;
    return GpuDrag{gpu.toInt(), o->value(QStringLiteral("job")).toString()};
}

bool isRailyardDrag(const QMimeData *data)
{
    return data
           && (data->hasFormat(QLatin1String(kGroupType))
               || data->hasFormat(QLatin1String(kGpuType)));
}

} // namespace railyard::mime
