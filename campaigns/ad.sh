#!/usr/bin/env bash
# Campaign: the random automatic-differentiation program generator (tests/ad/identity_test.cpp)
# for about SECONDS, at each optimization level in turn, with every failure dumped and counted.
#
#   campaigns/ad.sh SECONDS [BUILD_DIR] [RESULTS_DIR]
#
# Environment: AD_LEVELS (default "2 0": the levels, each given an equal share of the time),
# AD_ROUND_SECONDS (default 600), AD_SEED (the first program seed; default random),
# AD_HANG_SECONDS (default 300: a round still running this long after twice its budget is
# stopped and counted as a hang).
#
# The time is spent in rounds of the test binary (AdRandom* and AdIdentity*: grad against finite
# differences, jvp against vjp, jacobian against both, hessian against finite differences of grad
# and against jvp(grad), value_and_grad against grad). Each round starts at the seed after the
# previous round's last program, so a round that crashes loses only itself: its last program
# (printed with COT_AD_FUZZ_VERBOSE to a log whose tail is kept) is the crash's reproduction.
# A failure's message goes to RESULTS_DIR/ad-failures/seed_<seed>_<fn>.txt (COT_AD_FUZZ_DUMP);
# `COT_AD_FUZZ_SEED=<seed> COT_AD_FUZZ_COUNT=1 BUILD_DIR/cotangent_tests
# --gtest_filter='AdRandom*:AdIdentity*'` runs that program again.
set -uo pipefail
secs=${1:?usage: campaigns/ad.sh SECONDS [BUILD_DIR] [RESULTS_DIR]}
build=${2:-build}
results=${3:-$build/campaigns}
here=$(cd "$(dirname "$0")" && pwd)
levels=${AD_LEVELS:-2 0}
round_secs=${AD_ROUND_SECONDS:-600}
hang_secs=${AD_HANG_SECONDS:-300}  # beyond twice its budget, a round counts as hung
seed=${AD_SEED:-$(( (RANDOM << 15 | RANDOM) + 10000 ))}
first_seed=$seed
tests="$build/cotangent_tests"
[[ -x $tests ]] || { echo "ad.sh: $tests not found; run make build first" >&2; exit 1; }

dump="$results/ad-failures"
logs="$results/ad-logs"
mkdir -p "$dump" "$logs"
dumped_before=$(find "$dump" -type f | wc -l)
nlevels=$(wc -w <<<"$levels")
per_level=$(( secs / nlevels ))
start=$(date +%s)
rounds=0 crashes=0 hangs=0 distinct=0 programs=0 ran=0 skipped=0 failed=0
declare -A level_programs level_failed
abnormal=()

for level in $levels; do
  level_programs[$level]=0 level_failed[$level]=0
  level_end=$(( $(date +%s) + per_level ))
  while (( $(date +%s) < level_end )); do
    budget=$(( level_end - $(date +%s) ))
    (( budget > round_secs )) && budget=$round_secs
    (( budget < 10 )) && break
    rounds=$((rounds + 1))
    out="$logs/round_${rounds}.out"
    err="$logs/round_${rounds}.err"
    echo "ad.sh: round $rounds, --opt $level, first seed $seed, $budget s"
    # Verbose mode prints every program before it runs; only the tail is kept, to name a crash.
    # A round that runs far past its budget is stopped: a hang of the compiler (exit 124).
    COTANGENT_OPT=$level COT_AD_FUZZ_SECONDS=$budget COT_AD_FUZZ_SEED=$seed \
      COT_AD_FUZZ_DUMP="$dump" COT_AD_FUZZ_VERBOSE=1 \
      timeout -k 10 $(( 2 * budget + hang_secs )) \
      "$tests" --gtest_filter='AdRandom*:AdIdentity*' >"$out" 2> >(tail -c 200000 >"$err")
    rc=$?
    wait  # for the tail of standard error
    # Each check prints "WHAT: P programs, R ran, S skipped, F failed" when it ends.
    read -r p r s f < <(sed -nE 's/.*: ([0-9]+) programs, ([0-9]+) ran, ([0-9]+) skipped, ([0-9]+) failed.*/\1 \2 \3 \4/p' \
      "$out" | awk '{p+=$1; r+=$2; s+=$3; f+=$4} END {print p+0, r+0, s+0, f+0}')
    programs=$((programs + p)) ran=$((ran + r)) skipped=$((skipped + s)) failed=$((failed + f))
    level_programs[$level]=$(( level_programs[$level] + p ))
    level_failed[$level]=$(( level_failed[$level] + f ))
    if (( rc > 1 )) || ! grep -q '^\[  PASSED  \]\|^\[  FAILED  \]' "$out"; then
      last=$(grep -o ': seed [0-9]*$' "$err" | tail -1)
      if (( rc == 124 )); then
        hangs=$((hangs + 1)) what="hung (stopped after $(( 2 * budget + hang_secs )) s)"
      else
        crashes=$((crashes + 1)) what="ended abnormally (exit $rc)"
      fi
      abnormal+=("round $rounds$last: $err")
      echo "ad.sh: round $rounds $what at${last#:}; the program is at the end of $err"
    fi
    # The next round starts after every seed this round used (the longest check drew the most).
    most=$(sed -nE 's/.*: ([0-9]+) programs,.*/\1/p' "$out" | sort -n | tail -1)
    seed=$(( seed + ${most:-1000} + 1 ))
    distinct=$(( distinct + ${most:-0} ))
  done
done

dumped=$(( $(find "$dump" -type f | wc -l) - dumped_before ))
by_level=""
for level in $levels; do
  by_level+="--opt $level: ${level_programs[$level]} programs, ${level_failed[$level]} failed; "
done
python3 "$here/summary.py" ad "$results" \
  "command=campaigns/ad.sh $secs $build $results (AD_LEVELS='$levels' AD_SEED=$first_seed)" \
  "duration_s=$(( $(date +%s) - start ))" \
  "seeds=$first_seed..$((seed - 1))" \
  "rounds=$rounds" \
  "programs=$distinct (distinct seeds: the most any one check drew in each round)" \
  "checks=$programs (program x check: six checks, each drawing programs until its share of the time is spent)" \
  "ran=$ran" "skipped=$skipped" \
  "failed=$failed" \
  "by_level=${by_level%; }" \
  "crashed_rounds=$crashes" \
  "hung_rounds=$hangs" \
  "abnormal_rounds=${abnormal[*]:-none}" \
  "failure_files=$dumped new in $dump"
(( failed == 0 && crashes == 0 && hangs == 0 ))
