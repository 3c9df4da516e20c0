// The source rewriter: edits in the original's offsets, applied in one pass,
// keeping the lines of the code they do not touch.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "toolchain/lexer.h"
#include "toolchain/rewriter.h"

namespace {

using lockstep::toolchain::code_tokens;
using lockstep::toolchain::source_rewriter;
using lockstep::toolchain::token;

TEST(SourceRewriter, AppliesEditsInTheOriginalsOffsetsWhateverTheirOrder) {
  const std::string source = "int a = 1; float b = 2;";
  source_rewriter edits(source);
  edits.replace(17, 18, "beta");  // b
  edits.replace(4, 5, "alpha");   // a
  edits.insert(source.size(), " // rewritten");
  edits.insert(0, "static ");
  EXPECT_EQ(edits.result(), "static int alpha = 1; float beta = 2; // rewritten");
}

TEST(SourceRewriter, WithoutEditsGivesTheSourceBack) {
  const std::string source = "a\nb /* c */\n";
  const source_rewriter edits(source);
  EXPECT_TRUE(edits.empty());
  EXPECT_EQ(edits.result(), source);
}

TEST(SourceRewriter, ReplacesTokenRanges) {
  const std::string source = "f(x, y);";
  const auto tokens = code_tokens(source);
  source_rewriter edits(source);
  edits.replace(tokens[2], tokens[4], "y, x");
  EXPECT_EQ(edits.result(), "f(y, x);");
}

TEST(SourceRewriter, KeepsTheLinesOfUntouchedCode) {
  const std::string source = "a\nextern\n  __shared__\n  int s[];\nb\n";
  const auto before = code_tokens(source);
  source_rewriter edits(source);
  edits.replace(before[1], before[7], "int* s = nullptr;");  // `extern` .. `;`, over three lines
  const std::string out = edits.result();
  EXPECT_EQ(out, "a\nint* s = nullptr;\n\n\nb\n");
  const auto after = code_tokens(out);
  EXPECT_EQ(after[after.size() - 2].text, "b");
  EXPECT_EQ(after[after.size() - 2].line, before[before.size() - 2].line);
}

TEST(SourceRewriter, KeepsContinuedLinesContinued) {
  const std::string source = "#define D \\\n  one \\\n  two\nx";
  source_rewriter edits(source);
  edits.replace(source.find("one"), source.find("two") + 3, "three");
  EXPECT_EQ(edits.result(), "#define D \\\n  three\\\n\nx");
}

TEST(SourceRewriter, InsertionsAtOneOffsetGoInOrderBeforeAReplacementThere) {
  const std::string source = "x;";
  source_rewriter edits(source);
  edits.replace(0, 1, "y");
  edits.insert(0, "a ");
  edits.insert(0, "b ");
  edits.insert(1, " c");
  EXPECT_EQ(edits.result(), "a b y c;");
}

TEST(SourceRewriter, RefusesOverlapsRangesOutsideAndTextsWithMoreLines) {
  const std::string source = "0123456789\nab";
  source_rewriter edits(source);
  edits.replace(2, 5, "x");
  EXPECT_THROW(edits.replace(4, 6, "y"), std::invalid_argument);
  EXPECT_THROW(edits.replace(1, 3, "y"), std::invalid_argument);
  EXPECT_THROW(edits.replace(0, 9, "y"), std::invalid_argument);
  EXPECT_THROW(edits.insert(3, "y"), std::invalid_argument);
  EXPECT_THROW(edits.replace(8, 7, "y"), std::invalid_argument);
  EXPECT_THROW(edits.replace(9, source.size() + 1, "y"), std::invalid_argument);
  EXPECT_THROW(edits.replace(6, 7, "two\nlines"), std::invalid_argument);
  edits.insert(5, "|");  // touching is not overlapping
  edits.replace(8, 13, "one\nline");
  EXPECT_EQ(edits.result(), "01x|567one\nline");
}

}  // namespace
