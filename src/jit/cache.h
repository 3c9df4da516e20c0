// The on-disk cache of compiled kernel artifacts (host shared objects, cubins),
// shared by the threads and processes of one user.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "jit/private_directory.h"

namespace lockstep::jit {

// $LOCKSTEP_CACHE_DIR if set, else $XDG_CACHE_HOME/lockstep, else
// $HOME/.cache/lockstep; read from the environment on every call and created
// (0700) if missing. One owned by someone else or writable by group or others
// is not used: a private folder is, after a warning (src/jit/private_directory).
// Throws std::runtime_error when it cannot be created.
std::filesystem::path cache_directory();

struct cached_artifact {
  std::filesystem::path path;  // where it is, for messages: a file that is never rewritten in place
  // The same file reached through `directory`'s descriptor, for dlopen: what
  // was checked is what is loaded, even if the cache's path changes meanwhile.
  std::string loadable_path;
  std::string contents;                                // its bytes, as checked against the entry's checksum
  std::shared_ptr<const checked_directory> directory;  // keep while loadable_path is in use
  bool hit = false;                                    // false when this call built it
};

// A path to a valid artifact for `key`, the full text of everything the
// artifact depends on (source, options, compiler identity, target...).
// When there is none, or it is corrupt, build(path) writes it to `path` (a
// temporary name; `extension`, like ".so" or ".cubin", ends it) while other
// threads and processes asking for the same key wait. An exception from
// build leaves no entry and propagates. An entry file that is a symbolic link,
// not a regular file, or not this user's alone is never read (a warning names
// it) and is rebuilt.
cached_artifact cache_lookup_or_build(const std::string& key, const std::string& extension,
                                      const std::function<void(const std::filesystem::path&)>& build);

}  // namespace lockstep::jit
