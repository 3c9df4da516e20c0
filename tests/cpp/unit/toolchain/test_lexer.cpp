// The CUDA-aware lexer: one test per construct real CUDA files contain.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "toolchain/lexer.h"

namespace {

using lockstep::toolchain::code_tokens;
using lockstep::toolchain::token;
using lockstep::toolchain::token_cursor;
using lockstep::toolchain::token_kind;
using lockstep::toolchain::tokenize;

// The tokens' texts, without the end token.
std::vector<std::string> texts(const std::vector<token>& tokens) {
  std::vector<std::string> out;
  for (const token& t : tokens)
    if (t.kind != token_kind::end) out.emplace_back(t.text);
  return out;
}
std::vector<token_kind> kinds(const std::vector<token>& tokens) {
  std::vector<token_kind> out;
  for (const token& t : tokens) out.push_back(t.kind);
  return out;
}
using strings = std::vector<std::string>;
using token_kinds = std::vector<token_kind>;

TEST(Lexer, LineCommentsEndAtTheirLineUnlessContinued) {
  const std::string source = "a // b \"c\n d // e \\\n f\ng";
  const auto tokens = tokenize(source);
  EXPECT_EQ(texts(tokens), (strings{"a", "// b \"c", "d", "// e \\\n f", "g"}));
  EXPECT_EQ(tokens[1].kind, token_kind::comment);
  EXPECT_EQ(texts(code_tokens(source)), (strings{"a", "d", "g"}));
}

TEST(Lexer, BlockCommentsSpanLinesAndDoNotNest) {
  const std::string source = "a /* b \n /* c */ d */ e /* unterminated";
  const auto tokens = tokenize(source);
  EXPECT_EQ(texts(tokens), (strings{"a", "/* b \n /* c */", "d", "*", "/", "e", "/* unterminated"}));
  EXPECT_EQ(tokens[2].line, 2u);
  EXPECT_EQ(texts(code_tokens(source)), (strings{"a", "d", "*", "/", "e"}));
}

TEST(Lexer, StringLiteralsKeepEscapesPrefixesAndSuffixes) {
  const std::string source = R"(f("a\"b // c", "\\", u8"x", L"y", "z"_sv, "unterminated
next)";
  const auto tokens = code_tokens(source);
  EXPECT_EQ(texts(tokens),
            (strings{"f", "(", R"("a\"b // c")", ",", R"("\\")", ",", "u8\"x\"", ",", "L\"y\"", ",", "\"z\"_sv", ",", "\"unterminated", "next"}));
  for (std::size_t i : {2u, 4u, 6u, 8u, 10u, 12u}) EXPECT_EQ(tokens[i].kind, token_kind::string_literal) << tokens[i].text;
  EXPECT_EQ(tokens[13].line, 2u) << "an unterminated literal ends at its line";
}

TEST(Lexer, CharLiteralsAreNotStringsOrDigitSeparators) {
  const auto tokens = code_tokens(R"(c == '\'' || c == '"' || c == L'x' || c == u8'y' || c == '\\')");
  EXPECT_EQ(texts(tokens), (strings{"c", "==", R"('\'')", "||", "c", "==", R"('"')", "||", "c", "==", "L'x'", "||", "c", "==", "u8'y'", "||", "c",
                                    "==", R"('\\')"}));
  EXPECT_EQ(tokens[2].kind, token_kind::char_literal);
  EXPECT_EQ(tokens[6].kind, token_kind::char_literal);
}

TEST(Lexer, RawStringsHoldQuotesParenthesesAndLines) {
  const std::string source = "s = R\"x(a \" ) \"x // )\" \n b)x\"; t = LR\"(c)\"; u = R\"(/* not a comment)\" + 1;";
  const auto tokens = code_tokens(source);
  EXPECT_EQ(texts(tokens), (strings{"s", "=", "R\"x(a \" ) \"x // )\" \n b)x\"", ";", "t", "=", "LR\"(c)\"", ";", "u", "=", "R\"(/* not a comment)\"",
                                    "+", "1", ";"}));
  EXPECT_EQ(tokens[2].kind, token_kind::string_literal);
  EXPECT_EQ(tokens[3].line, 2u);
}

TEST(Lexer, DirectivesRunToTheEndOfTheirLogicalLine) {
  const std::string source =
      "#include <cstdio>\n"
      "  #  define TWICE(x) \\\n"
      "    ((x) + (x)) /* spans\n"
      "  lines */ + 1\n"
      "#define URL \"http://x\" // comment\n"
      "int a = b # c;\n"
      "/* before */ #pragma once\n"
      "int d;";
  const auto tokens = tokenize(source);
  EXPECT_EQ(tokens[0].kind, token_kind::directive);
  EXPECT_EQ(tokens[0].text, "#include <cstdio>");
  EXPECT_EQ(tokens[1].kind, token_kind::directive);
  EXPECT_EQ(tokens[1].text, "#  define TWICE(x) \\\n    ((x) + (x)) /* spans\n  lines */ + 1");
  EXPECT_EQ(tokens[2].text, "#define URL \"http://x\" // comment");
  EXPECT_EQ(tokens[2].line, 5u);
  EXPECT_EQ(texts(code_tokens(source)), (strings{"int", "a", "=", "b", "#", "c", ";", "int", "d", ";"}));
  // A '#' after a comment still starts a directive.
  EXPECT_EQ(tokens[10].kind, token_kind::comment);
  EXPECT_EQ(tokens[11].kind, token_kind::directive);
  EXPECT_EQ(tokens[11].text, "#pragma once");
}

TEST(Lexer, NumbersAreWholePreprocessingNumbers) {
  const auto tokens = code_tokens("1.0f 0x1p3 0x1.8p-3 1'000'000 1e+5 2.5E-3f .5 42ull 0b1010 3.f+x 1..2");
  EXPECT_EQ(texts(tokens), (strings{"1.0f", "0x1p3", "0x1.8p-3", "1'000'000", "1e+5", "2.5E-3f", ".5", "42ull", "0b1010", "3.f", "+", "x", "1..2"}));
  for (std::size_t i : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 12u}) EXPECT_EQ(tokens[i].kind, token_kind::number) << tokens[i].text;
  EXPECT_EQ(tokens[10].kind, token_kind::punctuator);
  EXPECT_EQ(tokens[11].kind, token_kind::identifier);
}

TEST(Lexer, PunctuatorsAreTheLongestMatch) {
  EXPECT_EQ(texts(code_tokens("k<<<g, b>>>(p->x, ns::f, a <<= 2, b >>= 1, c <=> d, e << f, g >> h, i ... , m->*n, o.*p, q++, --r, s##t)")),
            (strings{"k", "<<<", "g", ",", "b", ">>>", "(", "p", "->", "x",  ",", "ns", "::", "f",  ",", "a",  "<<=", "2",   ",",
                     "b", ">>=", "1", ",", "c", "<=>", "d", ",", "e",  "<<", "f", ",",  "g",  ">>", "h", ",",  "i",   "...", ",",
                     "m", "->*", "n", ",", "o", ".*",  "p", ",", "q",  "++", ",", "--", "r",  ",",  "s", "##", "t",   ")"}));
  // Three closing template brackets in a row read as CUDA's launch bracket.
  EXPECT_EQ(texts(code_tokens("a<b<c<int>>> x;")), (strings{"a", "<", "b", "<", "c", "<", "int", ">>>", "x", ";"}));
}

TEST(Lexer, TokensKnowTheirOffsetsAndLines) {
  const std::string source = "int a; /* one\ntwo */ float\r\n  b = \"x\\\ny\";\n\n  c";
  const auto tokens = tokenize(source);
  for (const token& t : tokens) EXPECT_EQ(source.substr(t.offset, t.text.size()), t.text);
  const auto code = code_tokens(source);
  EXPECT_EQ(texts(code), (strings{"int", "a", ";", "float", "b", "=", "\"x\\\ny\"", ";", "c"}));
  std::vector<std::size_t> lines;
  for (const token& t : code) lines.push_back(t.line);
  EXPECT_EQ(lines, (std::vector<std::size_t>{1, 1, 1, 2, 3, 3, 3, 4, 6, 6}));
  EXPECT_EQ(code.back().kind, token_kind::end);
  EXPECT_EQ(code.back().offset, source.size());
}

TEST(Lexer, BackslashNewlineJoinsLinesOfCode) {
  const auto tokens = code_tokens("a \\\n b");
  EXPECT_EQ(texts(tokens), (strings{"a", "b"}));
  EXPECT_EQ(tokens[1].line, 2u);
}

TEST(Lexer, NeverFailsOnStrayCharacters) {
  EXPECT_EQ(kinds(tokenize("")), (token_kinds{token_kind::end}));
  EXPECT_EQ(kinds(tokenize("@ ` \\ x")),
            (token_kinds{token_kind::other, token_kind::other, token_kind::other, token_kind::identifier, token_kind::end}));
  EXPECT_EQ(kinds(tokenize("\"")), (token_kinds{token_kind::string_literal, token_kind::end}));
}

TEST(Lexer, IdentifiersIncludeKeywordsDollarsAndUtf8) {
  const auto tokens = code_tokens("__global__ void k$1(float déjà) {}");
  EXPECT_EQ(texts(tokens), (strings{"__global__", "void", "k$1", "(", "float", "déjà", ")", "{", "}"}));
  EXPECT_EQ(tokens[5].kind, token_kind::identifier);
}

TEST(TokenCursor, LooksAheadAndStopsAtTheEnd) {
  const auto tokens = code_tokens("a b c");
  token_cursor cursor(tokens);
  EXPECT_EQ(cursor.peek().text, "a");
  EXPECT_EQ(cursor.peek(2).text, "c");
  EXPECT_EQ(cursor.peek(3).kind, token_kind::end);
  EXPECT_EQ(cursor.peek(1000).kind, token_kind::end);
  EXPECT_FALSE(cursor.accept("b"));
  EXPECT_TRUE(cursor.accept("a"));
  EXPECT_EQ(cursor.next().text, "b");
  EXPECT_EQ(cursor.next().text, "c");
  EXPECT_TRUE(cursor.at_end());
  EXPECT_EQ(cursor.next().kind, token_kind::end);
  EXPECT_TRUE(cursor.at_end());
  cursor.seek(1);
  EXPECT_EQ(cursor.peek().text, "b");
  const std::vector<token> no_end;
  EXPECT_THROW(token_cursor{no_end}, std::invalid_argument);
}

TEST(TokenCursor, SkipsBalancedBracketsOfEachKind) {
  const auto tokens = code_tokens("k<<<dim3(f(1), 2), b>>>(x[i[0]], { {} }); tail (");
  token_cursor cursor(tokens, 1);
  const std::size_t launch_close = cursor.skip_balanced();
  EXPECT_EQ(tokens[launch_close].text, ">>>");
  EXPECT_EQ(cursor.peek().text, "(");
  const std::size_t args_close = cursor.skip_balanced();
  EXPECT_EQ(tokens[args_close].text, ")");
  EXPECT_EQ(tokens[args_close + 1].text, ";");
  EXPECT_EQ(cursor.peek().text, ";");
  EXPECT_EQ(cursor.skip_balanced(), cursor.position()) << "not at a bracket: stays";
  cursor.next();
  cursor.next();
  EXPECT_EQ(cursor.peek().text, "(");
  EXPECT_EQ(tokens[cursor.skip_balanced()].kind, token_kind::end) << "unmatched: to the end";
}

TEST(Lexer, ReadsALaunchAsTheLaunchRewriteWillSeeIt) {
  const std::string source = "  saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0f, x, y); // go\n";
  const auto tokens = code_tokens(source);
  token_cursor cursor(tokens);
  EXPECT_EQ(cursor.next().text, "saxpy");
  ASSERT_EQ(cursor.peek().text, "<<<");
  const std::size_t open = cursor.position(), close = cursor.skip_balanced();
  EXPECT_EQ(source.substr(tokens[open].end_offset(), tokens[close].offset - tokens[open].end_offset()), "(n + 255) / 256, 256, 0, stream");
  EXPECT_EQ(tokens[close + 1].text, "(");
}

}  // namespace
