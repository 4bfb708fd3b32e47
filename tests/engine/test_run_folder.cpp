// Tests for apps/engine/run_folder: checkpoint file names and the pruning of old checkpoints
// (--keep-last-epochs, --keep-last).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "data_text/temp_dir.h"
#include "engine/run_folder.h"

using namespace nlapp;
namespace fs = std::filesystem;

TEST_CASE("run folder: checkpoint numbers from file names", "[engine][run-folder]") {
  CHECK(checkpoint_number("checkpoint7.safetensors", true) == 7);
  CHECK(checkpoint_number("checkpoint_3_1200.safetensors", false) == 1200);
  CHECK(checkpoint_number("checkpoint_3_1200.safetensors", true) == -1);  // an update file is not an epoch file
  CHECK(checkpoint_number("checkpoint7.safetensors", false) == -1);
  for (const char* f : {"checkpoint_best.safetensors", "checkpoint_last.safetensors", "checkpoint.safetensors",
                        "checkpoint7.pt", "other7.safetensors", "checkpoint_1_x.safetensors",
                        "checkpoint1234567890123456789.safetensors"})
    CHECK(checkpoint_number(f, true) == -1);
}

TEST_CASE("run folder: pruning keeps the newest checkpoints of one kind", "[engine][run-folder]") {
  const nltest::TempDir td("run-folder-prune");
  for (const char* f : {"checkpoint1.safetensors", "checkpoint2.safetensors", "checkpoint10.safetensors",
                        "checkpoint_1_100.safetensors", "checkpoint_2_200.safetensors", "checkpoint_best.safetensors",
                        "checkpoint_last.safetensors"})
    std::ofstream(td.path / f) << "x";
  auto names = [&] {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(td.path)) s.insert(e.path().filename().string());
    return s;
  };
  prune_checkpoints(td.path, 0, true);  // 0 keeps all
  CHECK(names().size() == 7);
  prune_checkpoints(td.path, 2, true);  // numeric order: 10 is newer than 2
  CHECK(names() == std::set<std::string>{"checkpoint2.safetensors", "checkpoint10.safetensors",
                                         "checkpoint_1_100.safetensors", "checkpoint_2_200.safetensors",
                                         "checkpoint_best.safetensors", "checkpoint_last.safetensors"});
  prune_checkpoints(td.path, 1, false);
  CHECK(names().count("checkpoint_1_100.safetensors") == 0);
  CHECK(names().count("checkpoint_2_200.safetensors") == 1);
  CHECK(names().count("checkpoint_best.safetensors") == 1);
}

TEST_CASE("run folder: an --out that is a file says so and asks for another --out", "[engine][run-folder]") {
  using Catch::Matchers::Contains;
  const nltest::TempDir td("run-folder-file");
  const fs::path file = td.write("results.txt", "not a folder");
  CHECK_THROWS_WITH(create_out_folder(file),
                    Contains("--out " + file.string() + " is a file, not a folder; choose another --out"));
  CHECK_THROWS_WITH(RunFolderLock(file), Contains("is a file, not a folder") && !Contains("filesystem error"));
  // A file as a parent of --out is named as well.
  CHECK_THROWS_WITH(create_out_folder(file / "run"),
                    Contains("--out " + (file / "run").string() + ": " + file.string() + " is a file, not a folder"));
  create_out_folder(td.path / "a" / "b");
  CHECK(fs::is_directory(td.path / "a" / "b"));
  create_out_folder(td.path / "a" / "b");  // an existing folder is fine
}
