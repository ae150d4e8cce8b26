#!/usr/bin/env bash
# Campaign: libFuzzer on parse+check (fuzz/fuzz_parse_check.cpp) and on the whole load of a
# module (fuzz/fuzz_load.cpp: parse, check, optimize, derive, print), each for SECONDS, with the
# corpus kept under fuzz/corpus growing from run to run.
#
#   campaigns/fuzz.sh SECONDS [FUZZ_BUILD_DIR] [RESULTS_DIR]
#
# Environment: FUZZ_TARGETS (default "fuzz_parse_check fuzz_load"), FUZZ_JOBS (default 1: fuzzing
# processes per target), FUZZ_MAX_UNIT (default 4096: the largest unit, in bytes, that the
# fuzzers make and that may enter the committed corpus).
#
# Each target runs in libFuzzer's fork mode, so that a crash, timeout or out-of-memory input is
# saved and the run goes on: the working corpus is FUZZ_BUILD_DIR/campaign/TARGET/corpus (new
# units land there), seeded with fuzz/corpus; findings go to RESULTS_DIR/fuzz-findings/TARGET/.
# Afterwards `-merge=1` adds to fuzz/corpus only the new units that cover something the corpus
# does not (libFuzzer's own minimization), so the committed corpus stays small; commit it.
set -uo pipefail
secs=${1:?usage: campaigns/fuzz.sh SECONDS [FUZZ_BUILD_DIR] [RESULTS_DIR]}
build=${2:-build-fuzz}
results=${3:-$build/campaigns}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
targets=${FUZZ_TARGETS:-fuzz_parse_check fuzz_load}
jobs=${FUZZ_JOBS:-1}
max_unit=${FUZZ_MAX_UNIT:-4096}
corpus="$root/fuzz/corpus"
limits=(-timeout=5 -rss_limit_mb=2048 "-max_len=$max_unit")

corpus_size() { echo "$(find "$1" -type f | wc -l) files, $(du -sk --apparent-size "$1" | cut -f1) KB"; }
start=$(date +%s)
corpus_before=$(corpus_size "$corpus")
figures=()
total_findings=0
failed_runs=0  # fuzzer or merge runs that ended in an error of their own
repros=()

for target in $targets; do
  bin="$build/$target"
  [[ -x $bin ]] || { echo "fuzz.sh: $bin not found; build it (make campaign-fuzz does)" >&2; exit 1; }
  work="$build/campaign/$target"
  findings="$results/fuzz-findings/$target"
  mkdir -p "$work/corpus" "$findings"
  log="$work/fuzz.log"
  units_before=$(find "$work/corpus" -type f | wc -l)
  found_before=$(find "$findings" -type f | wc -l)
  echo "fuzz.sh: $target for $secs s (log: $log)"
  touch "$work/started"  # findings newer than this are this run's
  t0=$(date +%s)
  "$bin" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$secs" "${limits[@]}" -artifact_prefix="$findings/" \
    "$work/corpus" "$corpus" >"$log" 2>&1
  rc=$?
  (( rc == 0 )) || failed_runs=$((failed_runs + 1))
  t1=$(date +%s)
  # Fork mode reports "#EXECS: cov: C ft: F corp: N exec/s E oom/timeout/crash: O/T/C time: S".
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
  execs=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<<"$last")
  oom_to_crash=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<<"$last")
  units_new=$(( $(find "$work/corpus" -type f | wc -l) - units_before ))
  found=$(( $(find "$findings" -type f | wc -l) - found_before ))
  total_findings=$((total_findings + found))
  while IFS= read -r f; do
    repros+=("$bin $f")
  done < <(find "$findings" -type f -newer "$work/started" | head -20)

  # Merge: the working corpus's units no larger than the cap, into fuzz/corpus.
  staging="$work/merge-staging"
  rm -rf "$staging" && mkdir -p "$staging"
  find "$work/corpus" -type f -size -"$((max_unit + 1))"c -exec cp -t "$staging" {} +
  merge_log="$work/merge.log"
  "$bin" -merge=1 "${limits[@]}" "$corpus" "$staging" >"$merge_log" 2>&1 ||
    failed_runs=$((failed_runs + 1))
  merged=$(sed -nE 's/.*MERGE-OUTER: ([0-9]+) new files.*/\1/p' "$merge_log" | tail -1)
  rm -rf "$staging"
  figures+=("$target=$((t1 - t0)) s, exit $rc, ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, $units_new new units in the working corpus, ${merged:-?} merged into fuzz/corpus, oom/timeout/crash ${oom_to_crash:-?}, $found finding files")
done

python3 "$here/summary.py" fuzz "$results" \
  "command=campaigns/fuzz.sh $secs $build $results (FUZZ_TARGETS='$targets' FUZZ_JOBS=$jobs FUZZ_MAX_UNIT=$max_unit)" \
  "duration_s=$(( $(date +%s) - start ))" \
  "${figures[@]}" \
  "corpus_before=$corpus_before" \
  "corpus_after=$(corpus_size "$corpus")" \
  "findings=$total_findings (under $results/fuzz-findings/)" \
  "failed_runs=$failed_runs (fuzzer or merge runs that exited with an error; see their logs)" \
  "reproduce=$(IFS=';'; echo "${repros[*]:-nothing to reproduce}")"
(( total_findings == 0 && failed_runs == 0 ))
