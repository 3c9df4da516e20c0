// The on-disk kernel cache: hits, misses, corrupt entries, concurrent builds.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <latch>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "jit/cache.h"
#include "toolchain/hash.h"

namespace fs = std::filesystem;
using lockstep::jit::cache_directory;
using lockstep::jit::cache_lookup_or_build;
using lockstep::jit::cached_artifact;
using lockstep::toolchain::hash_hex;

namespace {

// Sets an environment variable (unsets it for nullopt) until destroyed.
class scoped_environment_variable {
 public:
  scoped_environment_variable(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_value_ = old;
    set(value);
  }
  ~scoped_environment_variable() { set(old_value_); }

 private:
  void set(const std::optional<std::string>& value) {
    if (value)
      ::setenv(name_, value->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_value_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& contents) { std::ofstream(path, std::ios::binary) << contents; }

// A build that writes `contents` and counts its calls.
struct counting_build {
  std::string contents;
  std::atomic<int> calls{0};
  std::chrono::milliseconds duration{0};
  void operator()(const fs::path& path) {
    ++calls;
    std::this_thread::sleep_for(duration);
    write_file(path, contents);
  }
  std::function<void(const fs::path&)> as_function() {
    return [this](const fs::path& path) { (*this)(path); };
  }
};

class JitCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lockstep-cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    cache_ = scratch_ / "nested" / "cache";  // created on demand
    cache_dir_variable_.emplace("LOCKSTEP_CACHE_DIR", cache_.string());
  }
  void TearDown() override {
    cache_dir_variable_.reset();
    fs::remove_all(scratch_);
  }

  // The names of the cache directory's files that belong to `key`'s entry.
  std::set<std::string> entry_files(const std::string& key) const {
    std::set<std::string> names;
    for (const auto& file : fs::directory_iterator(cache_))
      if (file.path().filename().string().starts_with(hash_hex(key))) names.insert(file.path().filename().string());
    return names;
  }
  fs::path metadata_path(const std::string& key) const { return cache_ / (hash_hex(key) + ".meta"); }

  fs::path scratch_, cache_;
  std::optional<scoped_environment_variable> cache_dir_variable_;
};

TEST_F(JitCache, DirectoryComesFromTheEnvironmentOnEachCall) {
  EXPECT_EQ(cache_directory(), cache_);
  EXPECT_TRUE(fs::is_directory(cache_));

  const scoped_environment_variable unset_cache_dir("LOCKSTEP_CACHE_DIR", std::nullopt);
  {
    const scoped_environment_variable xdg("XDG_CACHE_HOME", (scratch_ / "xdg").string());
    EXPECT_EQ(cache_directory(), scratch_ / "xdg" / "lockstep");
  }
  const scoped_environment_variable no_xdg("XDG_CACHE_HOME", std::nullopt);
  const scoped_environment_variable home("HOME", (scratch_ / "home").string());
  EXPECT_EQ(cache_directory(), scratch_ / "home" / ".cache" / "lockstep");
  EXPECT_TRUE(fs::is_directory(scratch_ / "home" / ".cache" / "lockstep"));
}

TEST_F(JitCache, DirectoryThatCannotBeCreatedSaysWhatToDo) {
  write_file(scratch_ / "a-file", "");
  const scoped_environment_variable cache_dir("LOCKSTEP_CACHE_DIR", (scratch_ / "a-file" / "cache").string());
  try {
    cache_directory();
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("a-file/cache"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("set LOCKSTEP_CACHE_DIR"), std::string::npos) << error.what();
  }
}

TEST_F(JitCache, MissThenHit) {
  counting_build build{"artifact bytes"};
  const cached_artifact first = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_FALSE(first.hit);
  EXPECT_EQ(first.path.parent_path(), cache_);
  EXPECT_EQ(first.path.extension(), ".so");
  EXPECT_TRUE(first.path.filename().string().starts_with(hash_hex("key"))) << first.path;
  EXPECT_EQ(read_file(first.path), "artifact bytes");

  const cached_artifact second = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(second.path, first.path);
  EXPECT_EQ(build.calls, 1);
  // The artifact, its metadata and its lock; no temporaries left.
  EXPECT_EQ(entry_files("key").size(), 3u);
}

TEST_F(JitCache, DifferentKeysGetDifferentArtifacts) {
  counting_build build_a{"A"}, build_b{"B"};
  const cached_artifact a = cache_lookup_or_build("source a", ".so", build_a.as_function());
  const cached_artifact b = cache_lookup_or_build("source b", ".so", build_b.as_function());
  EXPECT_NE(a.path, b.path);
  EXPECT_EQ(read_file(a.path), "A");
  EXPECT_EQ(read_file(b.path), "B");
  EXPECT_TRUE(cache_lookup_or_build("source a", ".so", build_b.as_function()).hit);
  EXPECT_EQ(build_a.calls + build_b.calls, 2);
}

TEST_F(JitCache, EntryOfAnotherKeyUnderTheSameHashIsAMiss) {
  counting_build build_a{"A"}, build_b{"B"};
  const cached_artifact a = cache_lookup_or_build("key a", ".so", build_a.as_function());
  // As if hash_hex("key b") == hash_hex("key a"): b's metadata names key a
  // and a's intact artifact.
  fs::copy_file(metadata_path("key a"), metadata_path("key b"));

  const cached_artifact b = cache_lookup_or_build("key b", ".so", build_b.as_function());
  EXPECT_FALSE(b.hit);
  EXPECT_EQ(build_b.calls, 1);
  EXPECT_NE(b.path, a.path);
  EXPECT_EQ(read_file(b.path), "B");
  EXPECT_TRUE(cache_lookup_or_build("key b", ".so", build_b.as_function()).hit);
}

TEST_F(JitCache, TruncatedArtifactIsRebuiltUnderANewName) {
  counting_build build{"a longer artifact"};
  const cached_artifact first = cache_lookup_or_build("key", ".so", build.as_function());
  fs::resize_file(first.path, 4);

  const cached_artifact second = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_FALSE(second.hit);
  EXPECT_EQ(build.calls, 2);
  // A process that dlopen'd the old path would get the old library again.
  EXPECT_NE(second.path, first.path);
  EXPECT_EQ(read_file(second.path), "a longer artifact");
  EXPECT_FALSE(fs::exists(first.path));  // the stale one is cleaned up
}

TEST_F(JitCache, ArtifactWithChangedBytesIsRebuilt) {
  counting_build build{"original"};
  const cached_artifact first = cache_lookup_or_build("key", ".so", build.as_function());
  write_file(first.path, "originaX");  // same size

  const cached_artifact second = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_FALSE(second.hit);
  EXPECT_NE(second.path, first.path);
  EXPECT_EQ(read_file(second.path), "original");
}

TEST_F(JitCache, GarbageOrMissingMetadataIsRebuilt) {
  counting_build build{"artifact"};
  const cached_artifact first = cache_lookup_or_build("key", ".so", build.as_function());
  const std::string good_metadata = read_file(metadata_path("key"));
  const std::vector<std::string> garbage_metadata{"", "garbage\n", good_metadata.substr(0, good_metadata.size() - 1), good_metadata + "x"};
  for (const std::string& garbage : garbage_metadata) {
    write_file(metadata_path("key"), garbage);
    const cached_artifact rebuilt = cache_lookup_or_build("key", ".so", build.as_function());
    EXPECT_FALSE(rebuilt.hit) << garbage;
    EXPECT_EQ(read_file(rebuilt.path), "artifact");
    EXPECT_EQ(entry_files("key").size(), 3u);  // the old artifact went
  }
  fs::remove(metadata_path("key"));
  EXPECT_FALSE(cache_lookup_or_build("key", ".so", build.as_function()).hit);
  EXPECT_EQ(build.calls, 6);
}

TEST_F(JitCache, MetadataCannotPointOutsideTheCache) {
  counting_build build{"artifact"};
  cache_lookup_or_build("key", ".so", build.as_function());
  write_file(scratch_ / "elsewhere.so", "artifact");
  std::string metadata = read_file(metadata_path("key"));
  const std::size_t name_begin = metadata.find("artifact ") + 9;
  metadata.replace(name_begin, metadata.find('\n', name_begin) - name_begin, "../../elsewhere.so");
  write_file(metadata_path("key"), metadata);

  const cached_artifact rebuilt = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_FALSE(rebuilt.hit);
  EXPECT_EQ(rebuilt.path.parent_path(), cache_);
}

TEST_F(JitCache, BuildThatThrowsLeavesNoEntry) {
  const auto failing_build = [](const fs::path& path) {
    write_file(path, "half an artif");
    throw std::logic_error("compiler crashed");
  };
  EXPECT_THROW(cache_lookup_or_build("key", ".so", failing_build), std::logic_error);
  EXPECT_EQ(entry_files("key"), std::set<std::string>{hash_hex("key") + ".lock"});

  counting_build build{"artifact"};
  const cached_artifact next = cache_lookup_or_build("key", ".so", build.as_function());
  EXPECT_FALSE(next.hit);
  EXPECT_EQ(read_file(next.path), "artifact");
}

TEST_F(JitCache, BuildThatWritesNothingIsAnError) {
  EXPECT_THROW(cache_lookup_or_build("key", ".so", [](const fs::path&) {}), std::runtime_error);
  EXPECT_FALSE(fs::exists(metadata_path("key")));
}

TEST_F(JitCache, ThreadsAskingAtOnceShareOneBuild) {
  counting_build build{"shared"};
  build.duration = std::chrono::milliseconds(100);
  constexpr int thread_count = 8;
  std::vector<cached_artifact> results(thread_count);
  std::latch start(thread_count);
  std::vector<std::thread> threads;
  for (int i = 0; i < thread_count; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = cache_lookup_or_build("key", ".so", build.as_function());
    });
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(build.calls, 1);
  int built = 0;
  for (const cached_artifact& result : results) {
    EXPECT_EQ(result.path, results[0].path);
    built += !result.hit;
  }
  EXPECT_EQ(built, 1);
  EXPECT_EQ(read_file(results[0].path), "shared");
}

TEST_F(JitCache, ProcessesAskingAtOnceShareOneBuild) {
  const fs::path build_log = scratch_ / "builds";
  // Children block reading this pipe until the parent closes it: a common start.
  int start_gate[2];
  ASSERT_EQ(::pipe(start_gate), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(start_gate[1]);
      char ignored;
      (void)::read(start_gate[0], &ignored, 1);
      int exit_code = 1;
      try {
        const cached_artifact result = cache_lookup_or_build("key", ".so", [&](const fs::path& path) {
          const int log = ::open(build_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
          (void)::write(log, "b", 1);
          ::close(log);
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          write_file(path, "from a child");
        });
        if (read_file(result.path) == "from a child") exit_code = 0;
      } catch (...) {
      }
      ::_exit(exit_code);  // no gtest or static destructors in the child
    }
    children.push_back(child);
  }
  ::close(start_gate[0]);
  ::close(start_gate[1]);
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_EQ(read_file(build_log), "b");
  EXPECT_TRUE(cache_lookup_or_build("key", ".so", [](const fs::path&) { FAIL() << "rebuilt"; }).hit);
}

}  // namespace
