#include "toolchain/rewriter.h"

#include <algorithm>
#include <stdexcept>

namespace lockstep::toolchain {
namespace {

// Whether the newline at `at` is preceded by a backslash (blanks and a '\r'
// between allowed): a continued line.
bool is_continued(std::string_view text, std::size_t at) {
  while (at > 0 && (text[at - 1] == '\r' || text[at - 1] == ' ' || text[at - 1] == '\t')) --at;
  return at > 0 && text[at - 1] == '\\';
}

bool overlaps(std::size_t begin, std::size_t end, std::size_t other_begin, std::size_t other_end) {
  if (begin == end) return other_begin < begin && begin < other_end;  // an insertion inside a replaced range
  if (other_begin == other_end) return begin < other_begin && other_begin < end;
  return std::max(begin, other_begin) < std::min(end, other_end);
}

}  // namespace

void source_rewriter::replace(std::size_t begin, std::size_t end, std::string text) {
  if (begin > end || end > source_.size())
    throw std::invalid_argument("source_rewriter: the range [" + std::to_string(begin) + ", " + std::to_string(end) + ") is not inside the " +
                                std::to_string(source_.size()) + "-byte source");
  for (const edit& e : edits_)
    if (overlaps(begin, end, e.begin, e.end))
      throw std::invalid_argument("source_rewriter: the range [" + std::to_string(begin) + ", " + std::to_string(end) + ") overlaps the range [" +
                                  std::to_string(e.begin) + ", " + std::to_string(e.end) + ") already replaced; make one edit of both");
  const std::string_view range = source_.substr(begin, end - begin);
  if (std::count(text.begin(), text.end(), '\n') > std::count(range.begin(), range.end(), '\n'))
    throw std::invalid_argument("source_rewriter: the text for [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") has more lines than the range, which would move the lines after it; put it on fewer lines");
  edits_.push_back({begin, end, std::move(text)});
}

std::string source_rewriter::result() const {
  std::vector<const edit*> ordered;
  for (const edit& e : edits_) ordered.push_back(&e);
  // At one offset, insertions before the replacement that starts there.
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const edit* a, const edit* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  std::string out;
  out.reserve(source_.size() + 64 * edits_.size());
  std::size_t copied = 0;
  for (const edit* e : ordered) {
    out.append(source_, copied, e->begin - copied);
    out += e->text;
    // The range's last line breaks that the text does not have.
    std::size_t missing = static_cast<std::size_t>(
        std::count(source_.begin() + static_cast<std::ptrdiff_t>(e->begin), source_.begin() + static_cast<std::ptrdiff_t>(e->end), '\n') -
        std::count(e->text.begin(), e->text.end(), '\n'));
    std::string breaks;
    for (std::size_t at = e->end; missing > 0 && at-- > e->begin;) {
      if (source_[at] != '\n') continue;
      breaks.insert(0, is_continued(source_, at) ? "\\\n" : "\n");
      --missing;
    }
    out += breaks;
    copied = e->end;
  }
  out.append(source_, copied);
  return out;
}

}  // namespace lockstep::toolchain
