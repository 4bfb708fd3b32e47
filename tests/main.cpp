// Catch2 entry point for the whole suite (one binary; ctest runs each TEST_CASE on its own).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
