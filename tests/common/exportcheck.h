#pragma once

// What the export tests share: running the programs that open exported files the way other
// tools will (rsvg-convert, pdftoppm, pdftotext; scripts/install-deps.sh brings them, so a
// missing one fails the test rather than skipping it) and looking at the images they give.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QStringList>
#include <QXmlStreamReader>

namespace railyard::test {

struct Tool
{
    bool ok = false;
    QString output; // stdout, or why it failed
};

// Runs `program` with `args`; ok when it exists and exits 0.
inline Tool runTool(const QString &program, const QStringList &args)
{
    const QString exe = QStandardPaths::findExecutable(program);
    if (exe.isEmpty())
        return {false,
                program + QStringLiteral(" is not installed (scripts/install-deps.sh brings it)")};
    QProcess p;
    p.start(exe, args);
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return {false,
                program + QStringLiteral(" failed: ") + QString::fromUtf8(p.readAllStandardError())};
    return {true, QString::fromUtf8(p.readAllStandardOutput())};
}

// Pixels that differ clearly from `background` (any channel by more than 24).
inline qint64 inkPixels(const QImage &image, QColor background = Qt::white)
{
    const QImage img = image.convertToFormat(QImage::Format_ARGB32);
    qint64 n = 0;
    for (int y = 0; y < img.height(); ++y) {
        const QRgb *line = reinterpret_cast<const QRgb *>(img.constScanLine(y));
        for (int x = 0; x < img.width(); ++x) {
            const QRgb c = line[x];
            if (qAlpha(c) > 128
                && (std::abs(qRed(c) - background.red()) > 24
                    || std::abs(qGreen(c) - background.green()) > 24
                    || std::abs(qBlue(c) - background.blue()) > 24))
                ++n;
        }
    }
    return n;
}

// The character data of an XML file, each text node on its own line; `error` says where the
// file stops being XML.
inline QString xmlText(const QString &path, QString *error)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = f.errorString();
        return {};
    }
    QXmlStreamReader xml(&f);
    QString text;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isCharacters() && !xml.isWhitespace())
            text += xml.text().toString() + QLatin1Char('\n');
    }
    if (xml.hasError())
        *error = QStringLiteral("%1:%2: %3").arg(path).arg(xml.lineNumber()).arg(xml.errorString());
    return text;
}

// Text with every run of whitespace made one space (pdftotext breaks lines where it likes) and
// ligatures spelled out (the PDF keeps the font's "fi" glyph: "InfiniBand" comes back with U+FB01).
inline QString squeezed(const QString &text)
{
    return text.normalized(QString::NormalizationForm_KC).simplified();
}

} // namespace railyard::test
