#include "toolchain/lexer.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace lockstep::toolchain {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Bytes of UTF-8 sequences count as letters, as GCC and Clang accept them in identifiers.
bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_identifier_char(char c) { return is_identifier_start(c) || is_digit(c); }

// Longest first, so that the first match is the longest.
constexpr std::array<std::string_view, 29> multi_char_punctuators = {
    "<<<", ">>>", "<<=", ">>=", "<=>", "...", "->*", "::", "->", "++", "--", "<<", ">>", "<=", ">=",
    "==",  "!=",  "&&",  "||",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", ".*", "##",
};
constexpr std::string_view single_char_punctuators = "{}[]();:?.,+-*/%^&|~!=<>#";

constexpr std::array<std::string_view, 4> encoding_prefixes = {"u8", "u", "U", "L"};
constexpr std::array<std::string_view, 5> raw_string_prefixes = {"R", "u8R", "uR", "UR", "LR"};

template <std::size_t n>
bool is_one_of(std::string_view word, const std::array<std::string_view, n>& words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

class lexer {
 public:
  explicit lexer(std::string_view source) : s_(source) {}

  std::vector<token> run() {
    while (at_ < s_.size()) {
      const std::size_t spliced = spliced_newline_length(at_);
      const char c = s_[at_];
      if (c == '\n') {
        move_to(at_ + 1);
        line_start_ = true;
      } else if (spliced != 0) {
        move_to(at_ + spliced);  // a continued line: not a new line for directives
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
        move_to(at_ + 1);
      } else if (c == '/' && peek(1) == '/') {
        emit(token_kind::comment, end_of_line_comment(at_));
      } else if (c == '/' && peek(1) == '*') {
        emit(token_kind::comment, end_of_block_comment(at_));
      } else if (c == '#' && line_start_) {
        emit(token_kind::directive, end_of_directive(at_));
      } else {
        line_start_ = false;
        lex_code_token();
      }
    }
    tokens_.push_back({token_kind::end, s_.substr(s_.size()), s_.size(), line_});
    return std::move(tokens_);
  }

 private:
  char peek(std::size_t ahead) const { return at_ + ahead < s_.size() ? s_[at_ + ahead] : '\0'; }
  char char_at(std::size_t at) const { return at < s_.size() ? s_[at] : '\0'; }

  void move_to(std::size_t end) {
    line_ += static_cast<std::size_t>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(at_), s_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    at_ = end;
  }

  void emit(token_kind kind, std::size_t end) {
    tokens_.push_back({kind, s_.substr(at_, end - at_), at_, line_});
    move_to(end);
  }

  // The length of a backslash that ends its line (trailing blanks allowed, as
  // GCC allows them) with the newline, or 0.
  std::size_t spliced_newline_length(std::size_t at) const {
    if (char_at(at) != '\\') return 0;
    std::size_t j = at + 1;
    while (char_at(j) == ' ' || char_at(j) == '\t') ++j;
    if (char_at(j) == '\r') ++j;
    return char_at(j) == '\n' ? j + 1 - at : 0;
  }

  // Up to (not including) the newline that ends the comment's logical line.
  std::size_t end_of_line_comment(std::size_t at) const {
    std::size_t j = at + 2;
    while (j < s_.size() && s_[j] != '\n') j += std::max<std::size_t>(spliced_newline_length(j), 1);
    return j;
  }

  std::size_t end_of_block_comment(std::size_t at) const {
    const std::size_t close = s_.find("*/", at + 2);
    return close == std::string_view::npos ? s_.size() : close + 2;
  }

  // After the closing quote, or at the newline (or the end) where an
  // unterminated literal stops. A backslash escapes the next character,
  // a newline included (a continued literal).
  std::size_t end_of_quoted(std::size_t open) const {
    const char quote = s_[open];
    for (std::size_t j = open + 1; j < s_.size();) {
      if (s_[j] == '\\') {
        j += char_at(j + 1) == '\r' && char_at(j + 2) == '\n' ? 3 : 2;
      } else if (s_[j] == quote) {
        return j + 1;
      } else if (s_[j] == '\n') {
        return j;
      } else {
        ++j;
      }
    }
    return s_.size();
  }

  // R"delimiter( ... )delimiter": after the closing quote (the source's end
  // when unterminated), or 0 when `open` starts no valid raw string.
  std::size_t end_of_raw_string(std::size_t open) const {
    const std::size_t paren = s_.find('(', open + 1);
    if (paren == std::string_view::npos || paren - open - 1 > 16) return 0;
    const std::string_view delimiter = s_.substr(open + 1, paren - open - 1);
    if (delimiter.find_first_of(" ()\\\t\v\f\r\n\"") != std::string_view::npos) return 0;
    std::string closing = ")";
    closing.append(delimiter).push_back('"');
    const std::size_t close = s_.find(closing, paren + 1);
    return close == std::string_view::npos ? s_.size() : close + closing.size();
  }

  // A literal's user-defined suffix ("s"_sv, 'c'_ch) belongs to it.
  std::size_t after_suffix(std::size_t end) const {
    if (end == 0 || (s_[end - 1] != '"' && s_[end - 1] != '\'') || !is_identifier_start(char_at(end))) return end;
    while (is_identifier_char(char_at(end))) ++end;
    return end;
  }

  // The logical line from `#`, across continuations and comments that span
  // lines; without the newline that ends it.
  std::size_t end_of_directive(std::size_t at) const {
    std::size_t j = at + 1;
    while (j < s_.size() && s_[j] != '\n') {
      if (const std::size_t spliced = spliced_newline_length(j); spliced != 0) {
        j += spliced;
      } else if (s_[j] == '/' && char_at(j + 1) == '/') {
        j = end_of_line_comment(j);
      } else if (s_[j] == '/' && char_at(j + 1) == '*') {
        j = end_of_block_comment(j);
      } else if (s_[j] == '"' || s_[j] == '\'') {
        j = end_of_quoted(j);
      } else {
        ++j;
      }
    }
    return j;
  }

  // pp-number: a digit (or '.' and a digit), then digits, letters, '.', a
  // digit separator before a digit or letter, and a sign after e, E, p or P.
  std::size_t end_of_number(std::size_t at) const {
    std::size_t j = at + 1;
    for (;;) {
      const char c = char_at(j);
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (char_at(j + 1) == '+' || char_at(j + 1) == '-')) {
        j += 2;
      } else if (c == '\'' && is_identifier_char(char_at(j + 1))) {
        j += 2;
      } else if (is_identifier_char(c) || c == '.') {
        ++j;
      } else {
        return j;
      }
    }
  }

  void lex_code_token() {
    const char c = s_[at_];
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      emit(token_kind::number, end_of_number(at_));
    } else if (is_identifier_start(c)) {
      std::size_t end = at_ + 1;
      while (is_identifier_char(char_at(end))) ++end;
      const std::string_view word = s_.substr(at_, end - at_);
      const char after = char_at(end);
      if (after == '"' && is_one_of(word, raw_string_prefixes)) {
        if (const std::size_t raw_end = end_of_raw_string(end); raw_end != 0) return emit(token_kind::string_literal, after_suffix(raw_end));
      }
      if ((after == '"' || after == '\'') && (is_one_of(word, encoding_prefixes) || is_one_of(word, raw_string_prefixes))) {
        // An invalid raw string is lexed as an ordinary one, as compilers recover.
        emit(after == '"' ? token_kind::string_literal : token_kind::char_literal, after_suffix(end_of_quoted(end)));
      } else {
        emit(token_kind::identifier, end);
      }
    } else if (c == '"' || c == '\'') {
      emit(c == '"' ? token_kind::string_literal : token_kind::char_literal, after_suffix(end_of_quoted(at_)));
    } else {
      for (std::string_view p : multi_char_punctuators)
        if (s_.substr(at_, p.size()) == p) return emit(token_kind::punctuator, at_ + p.size());
      emit(single_char_punctuators.find(c) != std::string_view::npos ? token_kind::punctuator : token_kind::other, at_ + 1);
    }
  }

  std::string_view s_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  bool line_start_ = true;  // only blanks and comments so far on this line: a '#' starts a directive
  std::vector<token> tokens_;
};

}  // namespace

std::vector<token> tokenize(std::string_view source) { return lexer(source).run(); }

std::vector<token> code_tokens(std::string_view source) {
  std::vector<token> tokens = tokenize(source);
  std::erase_if(tokens, [](const token& t) { return t.kind == token_kind::comment || t.kind == token_kind::directive; });
  return tokens;
}

token_cursor::token_cursor(const std::vector<token>& tokens, std::size_t position) : tokens_(&tokens), position_(0) {
  if (tokens.empty() || tokens.back().kind != token_kind::end)
    throw std::invalid_argument("token_cursor: the token list must end with an end token, as tokenize() returns it");
  seek(position);
}

const token& token_cursor::peek(std::size_t ahead) const {
  return (*tokens_)[std::min(position_ + std::min(ahead, tokens_->size()), tokens_->size() - 1)];
}

const token& token_cursor::next() {
  const token& current = peek();
  seek(position_ + 1);
  return current;
}

bool token_cursor::accept(std::string_view text) {
  const token& t = peek();
  if ((t.kind != token_kind::punctuator && t.kind != token_kind::identifier) || t.text != text) return false;
  next();
  return true;
}

void token_cursor::seek(std::size_t position) { position_ = std::min(position, tokens_->size() - 1); }

std::size_t token_cursor::skip_balanced() {
  const token& open = peek();
  std::string_view close;
  if (open.kind != token_kind::punctuator) return position_;
  if (open.text == "(")
    close = ")";
  else if (open.text == "[")
    close = "]";
  else if (open.text == "{")
    close = "}";
  else if (open.text == "<<<")
    close = ">>>";
  else
    return position_;
  const std::string_view open_text = open.text;
  int depth = 0;
  while (!at_end()) {
    const token& t = next();
    if (t.kind != token_kind::punctuator) continue;
    if (t.text == open_text)
      ++depth;
    else if (t.text == close && --depth == 0)
      return position_ - 1;
  }
  return position_;
}

}  // namespace lockstep::toolchain
