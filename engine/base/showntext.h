#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace railyard::engine {

// How much of a layout's free text (its title and notes: whatever the file holds, a 30 MB
// title included) is shown. A title names the diagram in a title block, a window, a report's
// heading or a file's metadata: 200 characters is three lines of a title block, past any real
// title. Notes are read in a panel: 8,192 characters is pages of them. The layout keeps the whole
// text; only what is drawn, laid out or written as a heading is cut.
inline constexpr std::size_t kShownTitleChars = 200;
inline constexpr std::size_t kShownNotesChars = 8192;
// Longer than this (in bytes), a panel shows the text cut and read-only rather than in an edit
// field: a line edit holds at most 32,767 characters, and laying out megabytes of notes takes
// minutes. An edit of a cut text would throw away the rest.
inline constexpr std::size_t kEditableTitleBytes = 32767;
inline constexpr std::size_t kEditableNotesBytes = 65536;

// `text` when it has at most `maxChars` characters (UTF-8 code points); otherwise its first
// `maxChars - 1` characters, cut at a character boundary, and "…". Costs O(maxChars), not
// O(text): a multi-megabyte title is never scanned whole.
std::string shownText(std::string_view text, std::size_t maxChars);
inline std::string shownTitle(std::string_view title)
{
    return shownText(title, kShownTitleChars);
}
inline std::string shownNotes(std::string_view notes)
{
    return shownText(notes, kShownNotesChars);
}

} // namespace railyard::engine
