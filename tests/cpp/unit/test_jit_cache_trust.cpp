// The kernel cache loads only code this user built: owner-only folders and
// files, and entries planted by someone else, in a folder others can write,
// or through symbolic links, refused with a message and never loaded. CI runs
// as root, so "someone else" is made with chown to an unprivileged uid.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "jit/cache.h"
#include "lockstep/runtime.h"
#include "toolchain/hash.h"

namespace fs = std::filesystem;
using lockstep::jit::cache_directory;
using lockstep::jit::cache_lookup_or_build;
using lockstep::jit::cached_artifact;
using lockstep::toolchain::hash_hex;

namespace {

constexpr uid_t someone_else = 65534;  // "nobody"

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& contents) { std::ofstream(path, std::ios::binary) << contents; }

unsigned mode_of(const fs::path& path) {
  struct stat status {};
  EXPECT_EQ(::lstat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

void change_owner(const fs::path& path) { ASSERT_EQ(::lchown(path.c_str(), someone_else, someone_else), 0) << path << ": the tests need root"; }

std::string random_token() { return std::to_string(std::random_device{}()) + std::to_string(std::random_device{}()); }

// Runs `action` and returns what it wrote to stderr.
std::string stderr_of(const std::function<void()>& action) {
  ::testing::internal::CaptureStderr();
  action();
  return ::testing::internal::GetCapturedStderr();
}

class scoped_cache_dir {
 public:
  explicit scoped_cache_dir(const fs::path& path) {
    if (const char* old = std::getenv("LOCKSTEP_CACHE_DIR")) old_ = old;
    ::setenv("LOCKSTEP_CACHE_DIR", path.c_str(), 1);
  }
  ~scoped_cache_dir() {
    if (old_)
      ::setenv("LOCKSTEP_CACHE_DIR", old_->c_str(), 1);
    else
      ::unsetenv("LOCKSTEP_CACHE_DIR");
  }

 private:
  std::optional<std::string> old_;
};

class scratch_folder {
 public:
  scratch_folder() {
    std::string pattern = (fs::temp_directory_path() / "lockstep-trust-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~scratch_folder() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// --- The cache alone -------------------------------------------------------

class JitCacheTrust : public ::testing::Test {
 protected:
  // Keys no other test has used: a refused folder's fallback is shared by the process.
  std::string key_ = "key " + random_token();
  scratch_folder scratch_;
  fs::path cache_ = scratch_.path() / "nested" / "cache";
  scoped_cache_dir cache_dir_{cache_};

  cached_artifact lookup(const std::string& contents) {
    return cache_lookup_or_build(key_, ".so", [&](const fs::path& path) { write_file(path, contents); });
  }
};

TEST_F(JitCacheTrust, FoldersAndEntriesAreOwnerOnly) {
  const ::mode_t old_umask = ::umask(0);  // the modes are lockstep's choice, not the umask's
  const cached_artifact built = lookup("artifact");
  ::umask(old_umask);
  EXPECT_EQ(mode_of(scratch_.path() / "nested"), 0700u);
  EXPECT_EQ(mode_of(cache_), 0700u);
  int files = 0;
  for (const auto& file : fs::directory_iterator(cache_)) {
    EXPECT_EQ(mode_of(file.path()), 0600u) << file.path();
    ++files;
  }
  EXPECT_EQ(files, 3);  // artifact, metadata, lock
  EXPECT_EQ(built.contents, "artifact");
  EXPECT_EQ(read_file(built.loadable_path), "artifact");  // through the folder's descriptor
}

TEST_F(JitCacheTrust, ArtifactOwnedBySomeoneElseIsRebuilt) {
  const cached_artifact planted = lookup("planted");
  change_owner(planted.path);
  std::optional<cached_artifact> next;
  const std::string warning = stderr_of([&] { next = lookup("built by me"); });
  EXPECT_NE(warning.find(planted.path.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("owned by uid 65534"), std::string::npos) << warning;
  EXPECT_FALSE(next->hit);
  EXPECT_EQ(next->contents, "built by me");
  EXPECT_FALSE(fs::exists(planted.path));
  EXPECT_TRUE(lookup("not called").hit);  // the rebuilt entry is trusted
}

TEST_F(JitCacheTrust, MetadataOwnedBySomeoneElseIsRebuilt) {
  lookup("planted");
  const fs::path metadata = cache_ / (hash_hex(key_) + ".meta");
  change_owner(metadata);
  std::optional<cached_artifact> next;
  const std::string warning = stderr_of([&] { next = lookup("built by me"); });
  EXPECT_NE(warning.find(metadata.string()), std::string::npos) << warning;
  EXPECT_FALSE(next->hit);
  EXPECT_EQ(next->contents, "built by me");
}

TEST_F(JitCacheTrust, WritableEntryIsRebuilt) {
  const cached_artifact planted = lookup("planted");
  fs::permissions(planted.path, fs::perms::others_write, fs::perm_options::add);
  std::optional<cached_artifact> next;
  const std::string warning = stderr_of([&] { next = lookup("built by me"); });
  EXPECT_NE(warning.find(planted.path.string() + ": it is writable by others"), std::string::npos) << warning;
  EXPECT_EQ(next->contents, "built by me");
}

TEST_F(JitCacheTrust, ArtifactThatIsASymbolicLinkIsRebuilt) {
  const cached_artifact planted = lookup("planted");
  const fs::path elsewhere = scratch_.path() / "elsewhere.so";
  fs::rename(planted.path, elsewhere);  // same bytes, so its checksum still matches
  fs::create_symlink(elsewhere, planted.path);
  std::optional<cached_artifact> next;
  const std::string warning = stderr_of([&] { next = lookup("built by me"); });
  EXPECT_NE(warning.find(planted.path.string() + ": it is a symbolic link"), std::string::npos) << warning;
  EXPECT_FALSE(next->hit);
  EXPECT_EQ(next->contents, "built by me");
  EXPECT_EQ(read_file(elsewhere), "planted");  // the link is removed, not what it points to
}

// A folder that fails is not used at all: the entry in it is not read, and
// a private folder of this process's is used instead, with one warning.
void expect_folder_refused(JitCacheTrust& test, const fs::path& shown, const std::string& why,
                           const std::function<cached_artifact(const std::string&)>& lookup) {
  std::optional<cached_artifact> next;
  const std::string warning = stderr_of([&] { next = lookup("built by me"); });
  EXPECT_NE(warning.find("not using the kernel cache folder " + shown.string() + ": " + why), std::string::npos) << warning;
  EXPECT_NE(warning.find("chmod 700 " + shown.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("LOCKSTEP_CACHE_DIR"), std::string::npos) << warning;
  EXPECT_FALSE(next->hit);
  EXPECT_EQ(next->contents, "built by me");
  EXPECT_NE(next->path.parent_path(), shown);
  EXPECT_EQ(mode_of(next->path.parent_path()) & 077, 0u);
  EXPECT_EQ(cache_directory(), next->path.parent_path());
  // The fallback is a cache too; the warning is not repeated.
  std::optional<cached_artifact> again;
  EXPECT_EQ(stderr_of([&] { again = lookup("not called"); }), "");
  EXPECT_TRUE(again->hit);
  (void)test;
}

TEST_F(JitCacheTrust, WorldWritableFolderIsNotUsed) {
  lookup("planted");
  fs::permissions(cache_, fs::perms::all);
  expect_folder_refused(*this, cache_, "it is writable by others (mode 0777)", [&](const std::string& c) { return lookup(c); });
}

TEST_F(JitCacheTrust, GroupWritableFolderIsNotUsed) {
  lookup("planted");
  fs::permissions(cache_, fs::perms::owner_all | fs::perms::group_all);
  expect_folder_refused(*this, cache_, "it is writable by its group (mode 0770)", [&](const std::string& c) { return lookup(c); });
}

TEST_F(JitCacheTrust, FolderOwnedBySomeoneElseIsNotUsed) {
  lookup("planted");
  change_owner(cache_);
  expect_folder_refused(*this, cache_, "it is owned by uid 65534", [&](const std::string& c) { return lookup(c); });
}

TEST_F(JitCacheTrust, FolderThatIsASymbolicLinkToAWorldWritableFolderIsNotUsed) {
  lookup("planted");
  fs::permissions(cache_, fs::perms::all);
  const fs::path link = scratch_.path() / "link";
  fs::create_directory_symlink(cache_, link);
  const scoped_cache_dir through_link(link);
  expect_folder_refused(*this, link, "it is a symbolic link to " + cache_.string() + ", and it is writable by others",
                        [&](const std::string& c) { return lookup(c); });
}

TEST_F(JitCacheTrust, FolderThatIsASymbolicLinkToAPrivateFolderIsUsed) {
  const cached_artifact built = lookup("artifact");
  const fs::path link = scratch_.path() / "link";
  fs::create_directory_symlink(cache_, link);
  const scoped_cache_dir through_link(link);
  std::optional<cached_artifact> again;
  EXPECT_EQ(stderr_of([&] { again = lookup("not called"); }), "");
  EXPECT_TRUE(again->hit);
  EXPECT_EQ(again->contents, "artifact");
}

TEST_F(JitCacheTrust, FallbackFolderRebuildsCorruptEntriesLikeAnyOther) {
  fs::create_directories(cache_);
  fs::permissions(cache_, fs::perms::all);
  fs::path previous;
  stderr_of([&] { previous = lookup("artifact").path; });
  // Twice: the fallback folder's descriptor is shared by every lookup.
  for (int rebuild = 0; rebuild < 2; ++rebuild) {
    fs::resize_file(previous, 3);
    const cached_artifact next = lookup("artifact");
    EXPECT_FALSE(next.hit);
    EXPECT_EQ(next.contents, "artifact");
    EXPECT_FALSE(fs::exists(previous)) << "rebuild " << rebuild << " left the corrupt artifact";
    previous = next.path;
  }
  int files = 0;
  for (const auto& file : fs::directory_iterator(previous.parent_path())) files += file.path().filename().string().starts_with(hash_hex(key_));
  EXPECT_EQ(files, 3);  // artifact, metadata, lock
}

// --- Through lockstep::compile: a planted module is never run ---------------

// Kernel `which` writes 1; the planted module's writes 2 and, when loaded,
// sets an environment variable from a constructor.
const char* genuine_source = "__global__ void which(int* out) { *out = 1; }\n";
const char* planted_source = R"(
#include <cstdlib>
__attribute__((constructor)) static void planted_module_loaded() { setenv("LOCKSTEP_TEST_PLANTED_RAN", "1", 1); }
__global__ void which(int* out) { *out = 2; }
)";
constexpr const char* planted_marker = "LOCKSTEP_TEST_PLANTED_RAN";

int run_which(const lockstep::module& m) {
  lockstep::buffer out = lockstep::buffer::from_host(lockstep::device::cpu(), std::vector<int>{0});
  m.get("which")(dim3(1), dim3(1), 0, out.data_as<int>());
  return out.to_host<int>().at(0);
}

// The only .so of a cache folder and its entry's metadata.
struct entry_files {
  fs::path metadata, artifact;
};
entry_files only_entry(const fs::path& folder) {
  entry_files found;
  for (const auto& file : fs::directory_iterator(folder)) {
    if (file.path().extension() == ".so") found.artifact = file.path();
    if (file.path().extension() == ".meta") found.metadata = file.path();
  }
  return found;
}

class CompileTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv(planted_marker);
    // The planted module: built by lockstep elsewhere, then put in `cache_`
    // as the entry of genuine_ with a matching size and checksum.
    const fs::path elsewhere = scratch_.path() / "elsewhere";
    {
      const scoped_cache_dir build_there(elsewhere);
      { lockstep::compile(planted_, {}, lockstep::device::cpu()); }
      { lockstep::compile(genuine_, {}, lockstep::device::cpu()); }
    }
    ::unsetenv(planted_marker);  // it ran when compiled
    for (const auto& file : fs::directory_iterator(elsewhere))
      if (file.path().extension() == ".so" && read_file(file.path()).find("planted_module_loaded") != std::string::npos)
        planted_bytes_ = read_file(file.path());
    ASSERT_FALSE(planted_bytes_.empty());
    for (const auto& file : fs::directory_iterator(elsewhere))
      if (file.path().extension() == ".meta") {
        const std::string text = read_file(file.path());
        // The genuine module's entry (not the planted one's, nor the precompiled prelude's the parse wrote).
        if (text.find(token_) != std::string::npos && text.find("planted_module_loaded") == std::string::npos) genuine_metadata_ = text;
      }
    ASSERT_FALSE(genuine_metadata_.empty());
  }

  // Puts the planted entry in `folder` (created 0700), as lockstep would have written it.
  entry_files plant(const fs::path& folder) {
    fs::create_directories(folder);
    fs::permissions(folder, fs::perms::owner_all);
    std::string text = genuine_metadata_;
    const std::string artifact_name = text.substr(text.find("artifact ") + 9, text.find('\n', text.find("artifact ")) - text.find("artifact ") - 9);
    const std::string hash = artifact_name.substr(0, artifact_name.find('-'));
    auto replace_line = [&](const std::string& field, const std::string& value) {
      const std::size_t begin = text.find("\n" + field + " ") + field.size() + 2;
      text.replace(begin, text.find('\n', begin) - begin, value);
    };
    replace_line("size", std::to_string(planted_bytes_.size()));
    replace_line("checksum", hash_hex(planted_bytes_));
    const entry_files entry{folder / (hash + ".meta"), folder / artifact_name};
    write_file(entry.metadata, text);
    write_file(entry.artifact, planted_bytes_);
    fs::permissions(entry.metadata, fs::perms::owner_read | fs::perms::owner_write);
    fs::permissions(entry.artifact, fs::perms::owner_read | fs::perms::owner_write);
    return entry;
  }

  // Compiles genuine_ with `folder` as LOCKSTEP_CACHE_DIR; expects the
  // genuine kernel, the planted one never loaded, and a warning naming `shown`.
  void expect_refused(const fs::path& folder, const fs::path& shown) {
    const scoped_cache_dir use(folder);
    std::optional<lockstep::module> m;
    const std::string warning = stderr_of([&] { m = lockstep::compile(genuine_, {}, lockstep::device::cpu()); });
    EXPECT_NE(warning.find(shown.string()), std::string::npos) << warning;
    EXPECT_FALSE(m->from_cache());
    EXPECT_EQ(run_which(*m), 1);
    EXPECT_EQ(std::getenv(planted_marker), nullptr) << "the planted module was loaded";
  }

  std::string token_ = random_token();
  std::string genuine_ = "// " + token_ + "\n" + genuine_source;
  std::string planted_ = "// " + token_ + "\n" + planted_source;
  scratch_folder scratch_;
  fs::path cache_ = scratch_.path() / "cache";
  std::string planted_bytes_, genuine_metadata_;
};

// The control: a planted entry that passes the checks is loaded (so the
// refusals below are what keeps it out).
TEST_F(CompileTrust, PlantedEntryThatPassesIsLoaded) {
  plant(cache_);
  const scoped_cache_dir use(cache_);
  const lockstep::module m = lockstep::compile(genuine_, {}, lockstep::device::cpu());
  EXPECT_TRUE(m.from_cache());
  EXPECT_EQ(run_which(m), 2);
  EXPECT_NE(std::getenv(planted_marker), nullptr);
}

TEST_F(CompileTrust, PlantedEntryOwnedBySomeoneElseIsNotLoaded) {
  const entry_files planted = plant(cache_);
  change_owner(planted.artifact);
  expect_refused(cache_, planted.artifact);
}

TEST_F(CompileTrust, PlantedEntryInAWorldWritableFolderIsNotLoaded) {
  plant(cache_);
  fs::permissions(cache_, fs::perms::all);
  expect_refused(cache_, cache_);
}

TEST_F(CompileTrust, PlantedEntryInAGroupWritableFolderIsNotLoaded) {
  plant(cache_);
  fs::permissions(cache_, fs::perms::owner_all | fs::perms::group_all);
  expect_refused(cache_, cache_);
}

TEST_F(CompileTrust, PlantedEntryThroughASymbolicLinkIsNotLoaded) {
  const entry_files planted = plant(cache_);
  const fs::path elsewhere = scratch_.path() / "planted.so";
  fs::rename(planted.artifact, elsewhere);
  fs::create_symlink(elsewhere, planted.artifact);
  expect_refused(cache_, planted.artifact);
}

TEST_F(CompileTrust, PlantedEntryBehindACacheFolderThatLinksToAWorldWritableFolderIsNotLoaded) {
  plant(cache_);
  fs::permissions(cache_, fs::perms::all);
  const fs::path link = scratch_.path() / "link";
  fs::create_directory_symlink(cache_, link);
  expect_refused(link, link);
}

}  // namespace
