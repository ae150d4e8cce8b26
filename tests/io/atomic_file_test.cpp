// Files written whole or not at all (io/atomic_file.h, cotangent::write_files): a replaced file
// keeps its permissions and leaves no temporary; a failure anywhere leaves every previous file
// as it was and removes the temporaries; devices are written in place with the same checks.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/io.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("cotangent_atomic_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string contents(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The names in the directory, sorted, space-separated.
  std::string listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const auto& n : names) out += n + " ";
    return out;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, ReplacesAFileKeepingItsPermissions) {
  const std::string p = path("out.json");
  ASSERT_TRUE(write_files({{p, "old\n"}}).ok());
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  auto r = write_files({{p, "new\n"}});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(contents(p), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(listing(), "out.json ");
}

TEST_F(AtomicFileTest, AFailureLeavesEveryPreviousFileAndNoTemporary) {
  const std::string a = path("a.h"), b = path("b.cpp");
  ASSERT_TRUE(write_files({{a, "old a"}, {b, "old b"}}).ok());
  fs::create_directory(path("dir"));
  // The second file cannot be written (a directory): the first is not replaced either.
  auto r = write_files({{a, "new a"}, {path("dir"), "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].file, path("dir"));
  EXPECT_EQ(r.errors()[0].message, "cannot write the file: it is a directory");
  EXPECT_EQ(contents(a), "old a");
  // A file in a directory that does not exist.
  r = write_files({{a, "new a"}, {path("none/b.cpp"), "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors()[0].message.find("cannot create a temporary file in " + path("none")),
            std::string::npos)
      << r.message();
  EXPECT_EQ(contents(a), "old a");
  EXPECT_EQ(contents(b), "old b");
  EXPECT_EQ(listing(), "a.h b.cpp dir ");
}

TEST_F(AtomicFileTest, AFullDeviceIsAnErrorWithTheReason) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  io::AtomicFile f("/dev/full");
  f.write(std::string(100000, 'x'));
  EXPECT_FALSE(f.ok());
  auto r = f.commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].message, "cannot write the file: No space left on device");
  // Written in place, /dev/full stays a device.
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST_F(AtomicFileTest, AnUncommittedFileLeavesNoTrace) {
  const std::string p = path("x.npy");
  {
    io::AtomicFile f(p);
    f.write("partial");
    ASSERT_TRUE(f.ok());
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(listing(), "");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
