// A lexer for CUDA C++ source as it is written (before preprocessing): the
// tokens that source rewrites and kernel discovery walk, each with its byte
// offset and line, so an edit can name exactly the characters it replaces.
//
// It follows the C++ lexical grammar with CUDA's launch brackets `<<<` and
// `>>>` as punctuators of their own. A template argument list closed by three
// `>` in a row (`a<b<c<int>>>`) is lexed as `>>>` too: a consumer that parses
// templates splits it. Digraphs (`<:`, `%:`) are not recognized.
//
// The lexer never fails: an unterminated comment or literal ends at the end of
// its line (a literal) or of the source (a comment), and a character that
// starts no token is a token of kind `other`.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace lockstep::toolchain {

enum class token_kind {
  identifier,      // also keywords: the lexer does not tell them apart
  number,          // a preprocessing number: 1.0f, 0x1p-3, 1'000, 42ull, 1e+5
  string_literal,  // with its prefix and suffix: u8"a\n", R"x(...)x", "s"_sv
  char_literal,    // 'a', L'\0', u8'x'
  punctuator,      // the longest operator or bracket: `<<<`, `::`, `->`, `{`
  directive,       // a whole preprocessor directive, `#` to the end of its logical line
  comment,         // `// ...` (without its newline) or `/* ... */`
  other,           // a character that starts no token (`@`, a stray `\`)
  end,             // after the last token; its offset is the source's size
};

struct token {
  token_kind kind;
  std::string_view text;  // a view into the source given to tokenize()
  std::size_t offset;     // of the token's first byte in the source
  std::size_t line;       // of the token's first byte, counting from 1

  std::size_t end_offset() const { return offset + text.size(); }
  bool is(std::string_view t) const { return text == t; }
  bool is(token_kind k) const { return kind == k; }
};

// Every token of `source` in order, comments and directives included, then one
// token of kind `end`. The tokens' text views point into `source`, which must
// outlive them.
std::vector<token> tokenize(std::string_view source);

// The tokens the compiler proper sees: tokenize() without comments and
// directives (what a `#define` says is not expanded), ending with `end`.
std::vector<token> code_tokens(std::string_view source);

// Walks a token list that ends with an `end` token (as tokenize() and
// code_tokens() return) with lookahead: looking past the end gives `end`.
class token_cursor {
 public:
  explicit token_cursor(const std::vector<token>& tokens, std::size_t position = 0);

  const token& peek(std::size_t ahead = 0) const;
  const token& next();  // the current token; moves past it (never past `end`)
  bool at_end() const { return peek().kind == token_kind::end; }
  // Moves past the current token when it is the punctuator or identifier `text`.
  bool accept(std::string_view text);
  std::size_t position() const { return position_; }
  void seek(std::size_t position);

  // At an opening `(`, `[`, `{` or `<<<`: moves past its matching closing
  // bracket, counting only brackets of the same kind, and returns that
  // closing token's position; at an unmatched one, moves to `end` and returns
  // its position. Anywhere else, stays and returns the current position.
  std::size_t skip_balanced();

 private:
  const std::vector<token>* tokens_;
  std::size_t position_;
};

}  // namespace lockstep::toolchain
