// Edits to a source text (replace a byte range with new text), collected from
// any number of passes and applied in one: offsets always refer to the
// original text, so one edit never moves another.
//
// The untouched code keeps its line numbers, so compiler messages and debug
// information still point at the user's lines: a replaced range's line breaks
// that the new text lacks follow that text (a break continued by a backslash,
// as in a macro, stays continued).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolchain/lexer.h"

namespace lockstep::toolchain {

class source_rewriter {
 public:
  explicit source_rewriter(std::string_view source) : source_(source) {}

  // Replaces the bytes [begin, end) of the original text. Throws
  // std::invalid_argument when the range is outside the text, overlaps a range
  // already replaced, or when `text` has more newlines than the range (which
  // would move every line after it). Insertions (begin == end) at one offset
  // are applied in the order they were made.
  void replace(std::size_t begin, std::size_t end, std::string text);
  void insert(std::size_t at, std::string text) { replace(at, at, std::move(text)); }
  // Replaces the tokens first..last, both included (from the same tokenize()).
  void replace(const token& first, const token& last, std::string text) { replace(first.offset, last.end_offset(), std::move(text)); }

  bool empty() const { return edits_.empty(); }
  // The original text with every edit applied.
  std::string result() const;

 private:
  struct edit {
    std::size_t begin, end;
    std::string text;
  };
  std::string_view source_;
  std::vector<edit> edits_;  // in the order made
};

}  // namespace lockstep::toolchain
