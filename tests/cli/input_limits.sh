#!/usr/bin/env bash
# Hostile input sizes and odd text (issue 25, breaks 10 and 11): /dev/zero as a source file or
# JSON input, oversized files, 100,000 unknown JSON entries, empty results whose JSON would never
# end, byte-order marks and CR line endings, and the derivatives of sqrt and log at -0.0. Each
# on both backends where a backend runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

# cot_bounded SECONDS ARGS...: cot, but a run longer than SECONDS fails the test (these inputs
# used to read until the OOM killer or print forever).
cot_bounded() {
  local limit=$1
  shift
  last="cotangent $* (within ${limit}s)"
  status=0
  timeout "$limit" "$bin" "$@" </dev/null >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(head -c 2000 "$tmp/.out")
  err=$(head -c 20000 "$tmp/.err")
  [[ $status -ne 124 ]] || fail "did not finish within ${limit}s"
}

cat >m.cot <<'COT'
def f(x: f64) -> f64 { 2.0 * x }
COT

# `check /dev/zero` read until the OOM killer; a NUL byte now ends the read at once.
cot_bounded 20 check /dev/zero
expect_status 1
expect_err_first_line '^/dev/zero:1:1: error: the source file contains a NUL byte: it is not text$'
cot_bounded 20 run m.cot f --input /dev/zero
expect_status 1
expect_err_first_line '^/dev/zero:1:1: error: the JSON input contains a NUL byte: it is not text$'
# Endless text without a NUL stops at the limit (16 MiB for a source file).
mkfifo endless.cot
(yes 'def f(x: f64) -> f64 { x }' >endless.cot 2>/dev/null || true) &
cot_bounded 60 check endless.cot
expect_status 1
expect_err_first_line '^endless\.cot: error: the file is larger than 16 MiB, the largest source file accepted$'
wait
# A regular file over the limit is refused by its size, before it is read.
head -c 17000000 /dev/zero | tr '\0' ' ' >big.cot
cot_bounded 20 check big.cot
expect_status 1
expect_err_first_line '^big\.cot: error: the file is larger than 16 MiB, the largest source file accepted$'
mkdir adir
cot_bounded 20 run m.cot f --input adir
expect_status 1
expect_err_first_line '^adir: error: adir is a directory$'

# 100,000 unknown entries took minutes (a positioned error and a suggestion each, past the
# limit too): now 20 errors and a count of the rest, at once.
{
  printf '{'
  seq 0 99999 | sed 's/.*/"k&": 1, /' | tr -d '\n'
  printf '"x": 1}'
} >many.json
cot_bounded 20 run m.cot f --input many.json
expect_status 1
[[ $(grep -c ': error: ' <<<"$err") -eq 21 ]] || fail "expected 21 errors"
expect_err_first_line "^many\\.json:1:2: error: input has an entry 'k0' that is not a parameter"
expect_err_contains "many.json: error: 99980 more errors in the input are not shown"

# An empty result of shape [10^12, 0] printed forever; now an error, and .npy still works.
cat >empty.cot <<'COT'
def big() -> f64[1000000000000, 0] { for i: 1000000000000, j: 0. 1.0 }
def small() -> f64[3, 0] { for i: 3, j: 0. 1.0 }
COT
for backend in interp native; do
  for opt in 0 2; do
    cot_bounded 120 run empty.cot big --backend "$backend" --opt "$opt"
    expect_status 1
    expect_out_empty
    expect_err_first_line '^error: an empty tensor of shape \[1000000000000, 0\] is too large to write as JSON'
    expect_err_contains "help: write the result as .npy (--output OUT.npy)"
    cot_bounded 120 run empty.cot big --backend "$backend" --opt "$opt" --output big.npy
    expect_status 0
    [[ -s big.npy ]] || fail "big.npy was not written"
    rm big.npy
    cot_bounded 120 run empty.cot small --backend "$backend" --opt "$opt"
    expect_status 0
    expect_out '{"result": [[], [], []]}'
  done
done

# A byte-order mark and CR or CRLF line endings: the two statements are two statements.
for eol in '\n' '\r\n' '\r'; do
  printf "\xEF\xBB\xBFdef g(x: f64) -> f64 {${eol}  let a = x * 2.0${eol}  a + 1.0${eol}}${eol}" >eol.cot
  printf "\xEF\xBB\xBF{${eol}\"x\": 1.5${eol}}" >eol.json
  for backend in interp native; do
    cot_bounded 120 run eol.cot g --input eol.json --backend "$backend"
    expect_status 0
    expect_out '{"result": 4}'
  done
  printf "def h(x: f64) -> f64 {${eol}  let a = x${eol}  a + y${eol}}${eol}" >bad.cot
  cot_bounded 20 check bad.cot
  expect_status 1
  expect_err_first_line '^bad\.cot:3:7: error: '
  printf "{${eol}\"x\": true${eol}}" >bad.json
  cot_bounded 20 run eol.cot g --input bad.json
  expect_status 1
  expect_err_first_line '^bad\.json:2:6: error: x must be a real number'
done

echo "input_limits.sh: ok"
