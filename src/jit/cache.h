// The on-disk cache of compiled kernel artifacts (host shared objects, cubins),
// shared by the threads and processes of one user.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

namespace lockstep::jit {

// $LOCKSTEP_CACHE_DIR if set, else $XDG_CACHE_HOME/lockstep, else
// $HOME/.cache/lockstep; read from the environment on every call and created
// if missing. Throws std::runtime_error when it cannot be created.
std::filesystem::path cache_directory();

struct cached_artifact {
  std::filesystem::path path;  // a file that is never rewritten in place, safe to dlopen
  bool hit;                    // false when this call built it
};

// A path to a valid artifact for `key`, the full text of everything the
// artifact depends on (source, options, compiler identity, target...).
// When there is none, or it is corrupt, build(path) writes it to `path` (a
// temporary name; `extension`, like ".so" or ".cubin", ends it) while other
// threads and processes asking for the same key wait. An exception from
// build leaves no entry and propagates.
cached_artifact cache_lookup_or_build(const std::string& key, const std::string& extension,
                                      const std::function<void(const std::filesystem::path&)>& build);

}  // namespace lockstep::jit
