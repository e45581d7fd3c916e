// engine/safetext.h: text from a hostile file on its way to a terminal, SVG, PDF, Markdown, CSV
// and JSON (issue 17, part 2).
#include "base/inputerror.h"
#include "base/safetext.h"

#include <QTest>
#include <QXmlStreamReader>

#include <string>

using namespace railyard::engine;

namespace {

const std::string kScript = "</title><script>alert(1)</script>";
const std::string kControls = "a\x01 \x1b[31mred\x1b[0m \x7f \xc2\x9b"
                              "2J \xe2\x80\xae"
                              "evil\xff";
const std::string kFormula = "=cmd|' /C calc'!A0";

bool hasControl(const std::string &s)
{
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7F)
            return true;
        if (c == 0xC2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80)
            return true;
    }
    return s.find("\xe2\x80\xae") != std::string::npos;
}

} // namespace

class TestSafeText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void terminalTextEscapesControls()
    {
        const std::string t = terminalText(kControls);
        QVERIFY(!hasControl(t));
        QCOMPARE(t,
                 std::string("a\\x01 \\x1B[31mred\\x1B[0m \\x7F \\xC2\\x9B2J "
                             "\\xE2\\x80\\xAEevil\\xFF"));
        QCOMPARE(terminalText("GPU 0 \xE2\x80\x94 NVSwitch \xC2\xB1"),
                 std::string("GPU 0 \xE2\x80\x94 NVSwitch \xC2\xB1")); // UTF-8 stays
        QCOMPARE(terminalLines("one\ntwo\x1b"), std::string("one\ntwo\\x1B"));
        // echo() (every message's quoting) goes through it too, C1 included.
        QVERIFY(!hasControl(echo(kControls)));
        // Escaping twice changes nothing more: a message's echoed parts survive the final pass.
        QCOMPARE(terminalLines(t), t);
    }

    void xmlTextIsWellFormed()
    {
        const std::string x = xmlText(kScript + kControls + " & \" '");
        QVERIFY(x.find('<') == std::string::npos);
        QVERIFY(!hasControl(x));
        const QString doc = QStringLiteral("<t a=\"%1\">%1</t>").arg(QString::fromStdString(x));
        QXmlStreamReader xml(doc);
        QString text, attribute;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement())
                attribute = xml.attributes().value(QStringLiteral("a")).toString();
            if (xml.isCharacters())
                text += xml.text().toString();
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(text.startsWith(QString::fromStdString(kScript))); // shown as written
        QCOMPARE(attribute, text);
        QVERIFY(text.endsWith(QStringLiteral(" & \" '")));
        QCOMPARE(xmlText("\xef\xbf\xbe"), std::string("\xEF\xBF\xBD")); // U+FFFE is not XML
    }

    void plainTextIsOneLine()
    {
        const std::string p = plainText("a\nb\tc\r" + kControls);
        QVERIFY(!hasControl(p));
        QVERIFY(p.rfind("a b c ", 0) == 0);
        QCOMPARE(plainText(kScript), kScript); // not markup: left to the format's own escaping
    }

    void markdownTextCannotBreakATable()
    {
        const std::string m = markdownText("a | b\n# c <img src=x onerror=alert(1)> *d* _e_ "
                                           "[f](g) `h` \\");
        QCOMPARE(m,
                 std::string("a \\| b \\# c \\<img src=x onerror=alert(1)\\> \\*d\\* \\_e\\_ "
                             "\\[f\\](g) \\`h\\` \\\\"));
        QVERIFY(!hasControl(markdownText(kControls)));
    }

    void csvTextIsNeverAFormula_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::newRow("formula") << QString::fromStdString(kFormula)
                                 << QStringLiteral("'=cmd|' /C calc'!A0");
        QTest::newRow("plus") << "+1+2"
                              << "'+1+2";
        QTest::newRow("minus") << "-2+3"
                               << "'-2+3";
        QTest::newRow("at") << "@SUM(A1)"
                            << "'@SUM(A1)";
        QTest::newRow("tab") << "\tx"
                             << "'\tx";
        QTest::newRow("carriage return") << "\rx"
                                         << "\"'\rx\"";
        QTest::newRow("comma and quote") << "=a,\"b\""
                                         << "\"'=a,\"\"b\"\"\"";
        QTest::newRow("plain") << "GPU 0 \u2014 NVSwitch 0.0"
                               << "GPU 0 \u2014 NVSwitch 0.0";
        QTest::newRow("escape") << "\x1b[31m"
                                << "\uFFFD[31m";
    }
    void csvTextIsNeverAFormula()
    {
        QFETCH(QString, text);
        QFETCH(QString, field);
        std::string out;
        appendCsvText(out, text.toStdString());
        QCOMPARE(QString::fromStdString(out), field);
    }

    void jsonForTerminalEscapesC1()
    {
        QCOMPARE(jsonForTerminal("{\"a\": \"x\x7f\xc2\x9b\xc2\xb1\"}"),
                 std::string("{\"a\": \"x\\u007f\\u009b\xc2\xb1\"}"));
        QCOMPARE(jsonForTerminal("[\"\xe2\x80\xae\"]"), std::string("[\"\\u202e\"]"));
        const std::string plain = "{\"a\": \"\xe2\x80\x94\"}";
        QCOMPARE(jsonForTerminal(plain), plain);
    }
};

QTEST_GUILESS_MAIN(TestSafeText)
#include "tst_safetext.moc"
