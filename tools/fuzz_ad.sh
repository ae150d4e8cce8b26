#!/usr/bin/env bash
# Long runs of the randomized automatic-differentiation tests (tests/ad/identity_test.cpp).
#
#   tools/fuzz_ad.sh [SECONDS] [BUILD_DIR]
#
# Spends about SECONDS (default 600) generating random programs and checking their derivatives,
# starting from a random seed (or COT_AD_FUZZ_SEED when set), with the test binary of BUILD_DIR
# (default build-random). Failures print the program seed, the program and its inputs; rerun
# one program with COT_AD_FUZZ_SEED=<seed> COT_AD_FUZZ_COUNT=1.
set -euo pipefail
secs=${1:-600}
build=${2:-build-random}
seed=${COT_AD_FUZZ_SEED:-$(( (RANDOM << 15 | RANDOM) + 1000 ))}
echo "fuzz_ad: first seed $seed, about $secs seconds"
COT_AD_FUZZ_SECONDS=$secs COT_AD_FUZZ_SEED=$seed \
  "$build/cotangent_tests" --gtest_filter='AdRandom*:AdIdentity*'
