#include "host_source.h"

#include <cctype>
#include <cstddef>
#include <vector>

namespace lockstep::emu {
namespace {

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Removes alignment specifiers (__align__(n), alignas(n)), which may qualify
// the declaration but not the type named in a cast.
std::string without_alignment(std::string type) {
  for (const char* word : {"__align__", "alignas"}) {
    for (std::size_t at; (at = type.find(word)) != std::string::npos;) {
      std::size_t close = type.find(')', at);
      if (close == std::string::npos) break;
      type.erase(at, close + 1 - at);
    }
  }
  return trim(type);
}

bool word_at(const std::string& s, std::size_t at, const char* word) {
  const std::size_t n = std::char_traits<char>::length(word);
  return s.compare(at, n, word) == 0 && (at == 0 || !is_ident(s[at - 1])) && (at + n >= s.size() || !is_ident(s[at + n]));
}

}  // namespace

std::vector<std::size_t> token_offsets(const std::string& src, const char* word) {
  const std::size_t length = std::char_traits<char>::length(word);
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      i = src.find('\n', i);
      if (i == std::string::npos) break;
    } else if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      i = src.find("*/", i + 2);
      if (i == std::string::npos) break;
      ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < src.size() && src[i] != c; ++i)
        if (src[i] == '\\') ++i;
    } else if (word_at(src, i, word)) {
      found.push_back(i);
      i += length - 1;
    }
  }
  return found;
}

std::string host_source(const std::string& src) {
  std::string out;
  out.reserve(src.size() + 256);
  std::size_t copied = 0;
  for (std::size_t at : token_offsets(src, "extern")) {
    if (at < copied) continue;
    std::size_t p = at + 6;
    while (p < src.size() && std::isspace(static_cast<unsigned char>(src[p]))) ++p;
    if (!word_at(src, p, "__shared__")) continue;
    const std::size_t decl_begin = p + 10, semicolon = src.find(';', decl_begin);
    if (semicolon == std::string::npos) break;
    std::string decl = trim(src.substr(decl_begin, semicolon - decl_begin));
    // Expect `TYPE NAME[]`.
    if (decl.size() < 3 || decl.back() != ']') continue;
    std::size_t open = decl.rfind('[');
    if (trim(decl.substr(open + 1, decl.size() - open - 2)) != "") continue;
    std::string head = trim(decl.substr(0, open));
    std::size_t name_begin = head.size();
    while (name_begin > 0 && is_ident(head[name_begin - 1])) --name_begin;
    const std::string name = head.substr(name_begin), type = trim(head.substr(0, name_begin));
    if (name.empty() || type.empty()) continue;

    out.append(src, copied, at - copied);
    out += type + "* const " + name + " = reinterpret_cast<" + without_alignment(type) +
           "*>(::lockstep::emu::dynamic_shared_memory());";
    for (std::size_t i = at; i < semicolon; ++i)
      if (src[i] == '\n') out += '\n';
    copied = semicolon + 1;
  }
  out.append(src, copied, std::string::npos);
  return out;
}

}  // namespace lockstep::emu
