// The syntax tree and source offsets (analysis): cursors as nodes with their
// characters in the main file, tokens, line markers, and the questions about
// a call, a type or a constant that every later pass asks.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

std::size_t translation_unit_splitter::offset_of(CXSourceLocation loc) const {
  CXFile file;
  unsigned line, column, offset;
  clang_.clang_getExpansionLocation(loc, &file, &line, &column, &offset);
  return offset;
}

bool translation_unit_splitter::in_main_file(CXSourceLocation loc) const { return clang_.clang_Location_isFromMainFile(loc) != 0; }

// The file and line a location has for messages (after #line directives).
std::pair<std::string, unsigned> translation_unit_splitter::presumed(CXSourceLocation loc) const {
  CXString file;
  unsigned line, column;
  clang_.clang_getPresumedLocation(loc, &file, &line, &column);
  return {clang_.string(file), line};
}

std::string translation_unit_splitter::where(CXSourceLocation loc) const {
  const auto [file, line] = presumed(loc);
  return file + ":" + std::to_string(line);
}

std::string translation_unit_splitter::line_directive(CXSourceLocation loc) const {
  const auto [name, line] = presumed(loc);
  std::string escaped;
  for (char c : name) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c;
  }
  // A line marker, which preprocessed sources (-x c++-cpp-output) accept and #line is not.
  return "\n# " + std::to_string(line) + " \"" + escaped + "\"\n";
}

std::string_view translation_unit_splitter::text(std::size_t begin, std::size_t end) const {
  return std::string_view(text_).substr(begin, end - begin);
}

std::string translation_unit_splitter::line_of(const node& n) const { return where(clang_.clang_getCursorLocation(n.cursor)); }

// The first code token at or after `offset`.
std::size_t translation_unit_splitter::token_at(std::size_t offset) const {
  auto it = std::lower_bound(tokens_.begin(), tokens_.end(), offset, [](const toolchain::token& t, std::size_t o) { return t.offset < o; });
  return std::size_t(it - tokens_.begin());
}

// A statement's end, with the `;` that an expression statement's extent leaves out.
std::size_t translation_unit_splitter::statement_end(const node& n) const {
  const toolchain::token& next = tokens_[token_at(n.end)];
  return next.is(";") ? next.end_offset() : n.end;
}

// `const float* __restrict__ p = a, *q = b;` as the specifiers its
// declarators share (`const float`) and each declarator with its initializer
// (`* __restrict__ p = a`, `*q = b`): a declarator begins at its pointer and
// reference operators (with their qualifiers), the first one where the
// specifiers end in a name, a `>` or a `)`. Null unless every declarator is a
// variable spelled in the main file and commas alone separate them.
std::optional<declarator_texts> translation_unit_splitter::declarators_of(const node& statement) const {
  if (statement.kind != CXCursor_DeclStmt || statement.children.empty()) return std::nullopt;
  auto skip_comments_back = [&](std::size_t t) {
    while (t > 0 && tokens_[t - 1].is(toolchain::token_kind::comment)) --t;
    return t;
  };
  declarator_texts out;
  for (std::size_t i = 0; i < statement.children.size(); ++i) {
    const node& d = *statement.children[i];
    if (d.kind != CXCursor_VarDecl) return std::nullopt;
    const CXSourceLocation at = clang_.clang_getCursorLocation(d.cursor);
    const std::size_t name_at = offset_of(at);
    const std::string name = clang_.string(clang_.clang_getCursorSpelling(d.cursor));
    if (!in_main_file(at) || name.empty() || name_at < statement.begin || d.end > statement.end || text(name_at, name_at + name.size()) != name)
      return std::nullopt;
    std::size_t begin;
    if (i == 0) {
      std::size_t t = token_at(name_at);
      auto is_operator = [&](std::size_t k) { return tokens_[k].is("*") || tokens_[k].is("&") || tokens_[k].is("&&"); };
      for (;;) {
        const std::size_t before = skip_comments_back(t);
        if (before == 0) return std::nullopt;
        const toolchain::token& b = tokens_[before - 1];
        const bool qualifier = b.is("const") || b.is("volatile") || b.is("__restrict__") || b.is("__restrict");
        const std::size_t under = qualifier ? skip_comments_back(before - 1) : 0;
        if (is_operator(before - 1) || (qualifier && under > 0 && is_operator(under - 1))) {
          t = before - 1;
          continue;
        }
        if (!(b.is(toolchain::token_kind::identifier) || b.is(">") || b.is(")")) || b.offset < statement.begin) return std::nullopt;
        break;
      }
      begin = tokens_[t].offset;
      out.specifiers_end = begin;
    } else {
      std::size_t t = token_at(statement.children[i - 1]->end);
      while (t < tokens_.size() && tokens_[t].is(toolchain::token_kind::comment)) ++t;
      if (t >= tokens_.size() || !tokens_[t].is(",") || tokens_[t].end_offset() > name_at) return std::nullopt;
      out.commas.push_back(tokens_[t].offset);
      begin = tokens_[t].end_offset();
    }
    out.declarators.push_back({begin, d.end});
  }
  return out;
}

std::unique_ptr<node> translation_unit_splitter::make_node(CXCursor c, node* parent) const {
  auto n = std::make_unique<node>();
  n->cursor = c;
  n->kind = clang_.clang_getCursorKind(c);
  n->parent = parent;
  const CXSourceRange range = clang_.clang_getCursorExtent(c);
  n->begin = offset_of(clang_.clang_getRangeStart(range));
  n->end = offset_of(clang_.clang_getRangeEnd(range));
  std::vector<CXCursor> children;
  clang_.clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &children);
  for (const CXCursor& child : children) n->children.push_back(make_node(child, n.get()));
  return n;
}

std::string translation_unit_splitter::qualified_name(CXCursor c) const {
  std::string name = clang_.string(clang_.clang_getCursorSpelling(c));
  for (CXCursor p = clang_.clang_getCursorSemanticParent(c); !clang_.clang_Cursor_isNull(p); p = clang_.clang_getCursorSemanticParent(p)) {
    const CXCursorKind k = clang_.clang_getCursorKind(p);
    if (k == translation_unit_kind_) break;
    name = clang_.string(clang_.clang_getCursorSpelling(p)) + "::" + name;
  }
  return name;
}

// The name a member call is written with (a template's too, not resolved yet).
std::string translation_unit_splitter::member_name(const node& member) const {
  return clang_.string(clang_.clang_getCursorSpelling(clang_.clang_getCursorReferenced(member.cursor)));
}

// An expression's type, canonical, without a top-level const.
std::string translation_unit_splitter::canonical_type(const node& e) const {
  std::string type = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(clang_.clang_getCursorType(e.cursor))));
  return type.starts_with("const ") ? type.substr(6) : type;
}

// The name a call is written with (a template's call too, not resolved yet).
std::string translation_unit_splitter::call_name(const node& call) const {
  std::string name = clang_.string(clang_.clang_getCursorSpelling(call.cursor));
  if (const node* callee = callee_expression(call); name.empty() && callee) name = clang_.string(clang_.clang_getCursorSpelling(callee->cursor));
  return name;
}

// A call's arguments as written (not the defaults it leaves out).
std::vector<const node*> translation_unit_splitter::arguments_of(const node& call) const {
  std::vector<const node*> out;
  for (std::size_t i = 1; i < call.children.size(); ++i)
    if (call.children[i]->end > call.children[i]->begin && call.children[i]->begin >= call.children[i - 1]->end)
      out.push_back(call.children[i].get());
  return out;
}

// `#pragma unroll` wraps the loop it stands before (an attributed statement).
bool translation_unit_splitter::attributed_loop(const node& s) {
  return s.kind == CXCursor_UnexposedStmt && s.children.size() == 1 && is_loop(s.children.front()->kind);
}

for_header translation_unit_splitter::header_of_for(const node& loop) const {
  std::size_t i = token_at(loop.begin);
  if (!tokens_[i].is("for")) throw declined{"a loop written through a macro (" + line_of(loop) + ")"};
  for_header h{};
  h.open = tokens_[++i].offset;
  int depth = 0;
  int semicolons = 0;
  for (; i < tokens_.size(); ++i) {
    const toolchain::token& t = tokens_[i];
    if (t.is("(") || t.is("[") || t.is("{")) ++depth;
    if (t.is(")") || t.is("]") || t.is("}")) {
      if (--depth == 0) {
        h.close = t.offset;
        break;
      }
    }
    if (depth == 1 && t.is(";")) (semicolons++ == 0 ? h.first_semicolon : h.second) = t.offset;
  }
  if (semicolons != 2) throw declined{"a range-based for loop around a barrier (" + line_of(loop) + ")"};
  return h;
}

// The expression a call names its callee by, past implicit conversions; in
// a template, `f<T>(x)` and `ns::f(x)` name the candidates by the
// OverloadedDeclRef under it.
const node* translation_unit_splitter::callee_expression(const node& call) {
  const node* callee = call.children.empty() ? nullptr : call.children.front().get();
  while (callee && callee->kind == CXCursor_UnexposedExpr && !callee->children.empty()) callee = callee->children.front().get();
  if (callee && callee->kind == CXCursor_DeclRefExpr)
    for (const auto& c : callee->children)
      if (c->kind == CXCursor_OverloadedDeclRef) return c.get();
  return callee;
}

std::vector<CXCursor> translation_unit_splitter::candidates_of(const node& overloaded) const {
  std::vector<CXCursor> out;
  for (unsigned i = 0; i < clang_.clang_getNumOverloadedDecls(overloaded.cursor); ++i)
    out.push_back(clang_.clang_getOverloadedDecl(overloaded.cursor, i));
  return out;
}

// The functions a call may mean: its callee, or a template's candidates.
std::vector<CXCursor> translation_unit_splitter::callees(const node& call) const {
  const CXCursor callee = clang_.clang_getCursorReferenced(call.cursor);
  if (!clang_.clang_Cursor_isNull(callee)) return {callee};
  const node* ref = callee_expression(call);
  if (ref && ref->kind == CXCursor_OverloadedDeclRef) return candidates_of(*ref);
  return {};
}

// The token index of the `(` after a function's name at name_end, past template arguments.
std::size_t translation_unit_splitter::parameters_open(std::size_t name_end) const {
  std::size_t i = token_at(name_end);
  if (i < tokens_.size() && tokens_[i].is("<"))
    for (int depth = 0; i < tokens_.size(); ++i) {
      depth += tokens_[i].is("<") - tokens_[i].is(">") - 2 * tokens_[i].is(">>");
      if (depth <= 0) {
        ++i;
        break;
      }
    }
  if (i >= tokens_.size() || !tokens_[i].is("(")) throw declined{"a call or declaration of a function with barriers that lockstep cannot read"};
  return i;
}

// A block variant takes its caller's loop_block first (the caller's blocks
// and extents, which may span several blocks along x): `first` goes in
// after the `(` at token `open`, before what follows.
std::string translation_unit_splitter::with_first_argument(std::size_t open, std::string_view first) const {
  const std::size_t next = open + 1;
  if (next < tokens_.size() && tokens_[next].is(")")) return std::string(first);
  if (next + 1 < tokens_.size() && tokens_[next].is("void") && tokens_[next + 1].is(")")) return std::string(first);  // f(void)
  return std::string(first) + ", ";
}

// The side of a for loop's comparison that is a compile-time constant
// (`p < BK`), or null.
const node* translation_unit_splitter::constant_bound(const node& loop) const {
  if (loop.children.size() < 2) return nullptr;
  const node* condition = unwrapped(loop.children[1].get());
  if (condition->kind != CXCursor_BinaryOperator || condition->children.size() != 2) return nullptr;
  for (const auto& side : condition->children)
    if (compile_time_constant(*side)) return side.get();
  return nullptr;
}

// The integer Clang evaluates an expression or a constant's declaration to.
std::optional<long long> translation_unit_splitter::evaluated_integer(CXCursor c) const {
  const CXEvalResult value = clang_.clang_Cursor_Evaluate(c);
  if (!value) return std::nullopt;
  std::optional<long long> integer;
  if (clang_.clang_EvalResult_getKind(value) == CXEval_Int) integer = clang_.clang_EvalResult_getAsLongLong(value);
  clang_.clang_EvalResult_dispose(value);
  return integer;
}

bool translation_unit_splitter::compile_time_constant(const node& e) const {
  switch (e.kind) {
    case CXCursor_IntegerLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_CXXBoolLiteralExpr:
      return true;
    case CXCursor_UnaryExpr:  // sizeof, alignof
      return trimmed(text(e.begin, e.end)).starts_with("sizeof") || trimmed(text(e.begin, e.end)).starts_with("alignof");
    case CXCursor_DeclRefExpr: {
      const CXCursor decl = clang_.clang_getCursorReferenced(e.cursor);
      const CXCursorKind k = clang_.clang_getCursorKind(decl);
      if (k == CXCursor_NonTypeTemplateParameter || k == CXCursor_EnumConstantDecl) return true;
      if (k != CXCursor_VarDecl || !clang_.clang_isConstQualifiedType(clang_.clang_getCursorType(decl))) return false;
      return evaluated_integer(decl).has_value();
    }
    case CXCursor_ParenExpr:
    case CXCursor_UnexposedExpr:
    case CXCursor_BinaryOperator:
    case CXCursor_UnaryOperator:
      return !e.children.empty() && std::all_of(e.children.begin(), e.children.end(), [&](const auto& c) { return compile_time_constant(*c); });
    default:
      return false;
  }
}

std::vector<const node*> translation_unit_splitter::children_of(const node& n) {
  std::vector<const node*> out;
  for (const auto& c : n.children) out.push_back(c.get());
  return out;
}

// The canonical types of the parameters of a function, a member function, a
// constructor or a function template (whose types may name its parameters);
// none for anything else. A parameter pack is one parameter (its pattern's type).
std::vector<CXType> translation_unit_splitter::parameter_types(CXCursor function) const {
  std::vector<CXType> out;
  const CXCursorKind kind = clang_.clang_getCursorKind(function);
  if (kind == CXCursor_FunctionDecl || kind == CXCursor_CXXMethod || kind == CXCursor_Constructor) {
    for (int i = 0; i < clang_.clang_Cursor_getNumArguments(function); ++i)
      out.push_back(clang_.clang_getCanonicalType(clang_.clang_getCursorType(clang_.clang_Cursor_getArgument(function, unsigned(i)))));
  } else if (kind == CXCursor_FunctionTemplate) {
    struct collected {
      const libclang_api& clang;
      std::vector<CXType>& out;
    } c{clang_, out};
    clang_.clang_visitChildren(
        function,
        [](CXCursor child, CXCursor, CXClientData data) {
          auto* c = static_cast<collected*>(data);
          if (c->clang.clang_getCursorKind(child) == CXCursor_ParmDecl)
            c->out.push_back(c->clang.clang_getCanonicalType(c->clang.clang_getCursorType(child)));
          return CXChildVisit_Continue;
        },
        &c);
  }
  return out;
}

std::string_view translation_unit_splitter::trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Whether a node or one below it holds.
bool translation_unit_splitter::any_node(const node& n, const std::function<bool(const node&)>& holds) {
  return holds(n) || std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return any_node(*c, holds); });
}

// Whether converting `from` to `to`'s type keeps a signed value: the type is at least as wide.
bool translation_unit_splitter::keeps_value(const node& to, const node& from) const {
  const long long from_bytes = clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(from.cursor));
  return from_bytes > 0 && from_bytes <= clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(to.cursor));
}

// The expression inside parentheses and implicit conversions.
const node* translation_unit_splitter::unwrapped(const node* e) {
  while ((e->kind == CXCursor_ParenExpr || e->kind == CXCursor_UnexposedExpr) && e->children.size() == 1) e = e->children[0].get();
  return e;
}

std::string translation_unit_splitter::result_type(CXCursor function) const {
  return clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorResultType(function)));
}

// A function's (or function template's) parameters, in order.
std::vector<const node*> translation_unit_splitter::parameters_of(const node& function) {
  std::vector<const node*> out;
  for (const auto& c : function.children)
    if (c->kind == CXCursor_ParmDecl) out.push_back(c.get());
  return out;
}

// A function template's head (`template <reduce_op Op, class A>`) and the
// arguments that name its parameters (`<Op, A>`); both empty for a function.
std::pair<std::string, std::string> translation_unit_splitter::template_head(const node& function) const {
  if (clang_.clang_getCursorKind(function.cursor) != CXCursor_FunctionTemplate) return {};
  std::size_t i = token_at(function.begin);
  if (!tokens_[i].is("template") || !tokens_[i + 1].is("<")) throw declined{"a template head written through a macro"};
  for (int depth = 0; ++i < tokens_.size();) {
    depth += tokens_[i].is("<") - tokens_[i].is(">") - 2 * tokens_[i].is(">>");
    if (depth <= 0) break;
  }
  if (i >= tokens_.size()) throw declined{"a template head that lockstep cannot read"};
  std::string names;
  for (const auto& c : function.children) {
    if (c->kind != CXCursor_TemplateTypeParameter && c->kind != CXCursor_NonTypeTemplateParameter && c->kind != CXCursor_TemplateTemplateParameter)
      continue;
    const std::string name = clang_.string(clang_.clang_getCursorSpelling(c->cursor));
    if (name.empty()) throw declined{"a template parameter without a name"};
    names += (names.empty() ? "" : ", ") + name + (text(c->begin, c->end).find("...") != std::string_view::npos ? "..." : "");
  }
  return {std::string(text(function.begin, tokens_[i].end_offset())), "<" + names + ">"};
}

// A type deduced by `auto` is spelled as its canonical type, whose scopes
// are all written (the deduced spelling may leave the outer ones out).
std::string translation_unit_splitter::type_of(const variable& v) const {
  const CXType type = clang_.clang_getCursorType(v.decl);
  const std::string spelled = clang_.string(clang_.clang_getTypeSpelling(type));
  if (type.kind != CXType_Auto) return spelled;
  const std::string canonical = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(type)));
  return canonical.find("type-parameter") == std::string::npos ? canonical : spelled;
}

// A type the generated code cannot spell: a lambda's, an unnamed struct's or enum's.
bool translation_unit_splitter::unnamed_type(const std::string& type) {
  return type.find("(lambda") != std::string::npos || type.find("(unnamed") != std::string::npos || type.find("(anonymous") != std::string::npos;
}

std::string translation_unit_splitter::recomputed_type(const variable& v) const {
  const std::string type = type_of(v);
  return type.find("auto") != std::string::npos ? "auto" : type;
}

}  // namespace lockstep::emu::region_loops::compiler
