#!/usr/bin/env bash
# `cotangent gradbench`: GradBench's tool protocol on standard input and output, one JSON
# object per line, with the hello eval from the source tree (and from a directory given).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

messages='{"id":0,"kind":"start","eval":"hello"}
{"id":1,"kind":"define","module":"hello"}
{"id":2,"kind":"evaluate","module":"hello","function":"square","input":3}
{"id":3,"kind":"analysis","of":2,"valid":true}
{"id":4,"kind":"evaluate","module":"hello","function":"double","input":9.5}
{"id":5,"kind":"define","module":"gmm_of_another_tool"}
not json'
cot_stdin "$messages" gradbench --threads 1
expect_status 0
expect_err_empty
[[ $(printf '%s\n' "$out" | wc -l) -eq 7 ]] || fail "expected one response per message"
line() { printf '%s\n' "$out" | sed -n "$1p"; }
[[ $(line 1) == '{"id":0,"tool":"cotangent"}' ]] || fail "start"
[[ $(line 2) == '{"id":1,"success":true}' ]] || fail "define"
[[ $(line 3) == '{"id":2,"output":9.0,"success":true,"timings":[{"name":"prepare","nanoseconds":'*'},{"name":"evaluate","nanoseconds":'*'}]}' ]] ||
  fail "evaluate square: a prepare timing, then one run's"
[[ $(line 4) == '{"id":3}' ]] || fail "analysis"
[[ $(line 5) == '{"id":4,"output":19.0,"success":true,'* ]] || fail "evaluate double"
[[ $(line 6) == *'"id":5,"success":false'* ]] || fail "an unknown module"
[[ $(line 7) == *'"id":null,"success":false'* ]] || fail "a line that is not JSON"

# The programs from another directory: one whose hello squares wrongly is what answers.
mkdir other
printf 'def square(x: f64) -> f64 { x * x + 1.0 }\ndef double(x: f64) -> f64 { 2.0 * x }\n' \
  >other/hello.cot
cot_stdin '{"id":0,"kind":"define","module":"hello"}
{"id":1,"kind":"evaluate","module":"hello","function":"square","input":3}' gradbench other
expect_status 0
[[ $out == *'"output":10.0'* ]] || fail "the directory given"

# An input the eval's program cannot take: the error says which message (line) and where in it.
cot_stdin '{"id":0,"kind":"define","module":"lse"}

{"id":1,"kind":"evaluate","module":"lse","function":"primal","input":{"x":[1.5,[2]]}}' gradbench
expect_status 0
[[ $out == *'"error":"<stdin>:3: error: input.x[1]: expected a number, found an array'*'"success":false'* ]] ||
  fail "the input error names the line and the place: $out"

# The red team's breaks (issue 25), each followed by a message that must still be served.
hello='{"id":8,"kind":"define","module":"hello"}
{"id":9,"kind":"evaluate","module":"hello","function":"square","input":3}'
expect_hello_served() {
  [[ $(printf '%s\n' "$out" | sed -n "$1p") == '{"id":8,"success":true}' ]] || fail "define after $2"
  [[ $(printf '%s\n' "$out" | sed -n "$(($1 + 1))p") == '{"id":9,"output":9.0,"success":true,'* ]] ||
    fail "evaluate after $2"
}

# serve FILE: `cotangent gradbench` with the messages of FILE (not shown on failure: some are long).
serve() {
  last="cotangent gradbench < $1"
  status=0
  "$bin" gradbench <"$1" >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
}

# An input nested 100,000 deep overflowed the stack: refused at the CLI's 256 levels.
{
  echo '{"id":0,"kind":"define","module":"hello"}'
  printf '{"id":1,"kind":"evaluate","module":"hello","function":"square","input":'
  printf '%*s' 100000 '' | tr ' ' '['
  printf '%*s' 100000 '' | tr ' ' ']'
  echo '}'
  echo "$hello"
} >deep.jsonl
serve deep.jsonl
expect_status 0
[[ $(printf '%s\n' "$out" | wc -l) -eq 4 ]] || fail "one response per message after a deep input"
[[ $(printf '%s\n' "$out" | sed -n 2p) == '{"error":"<stdin>:2:'*'JSON is nested more than 256 levels deep'*'"id":null,"success":false}' ]] ||
  fail "the deep input's error"
expect_hello_served 3 "a deep input"

# ba with a count of 2^31 - 1 ended the process ("out of memory"): refused before allocating.
ba='{"id":2,"kind":"evaluate","module":"ba","function":"objective","input":{"n":1,"m":1,"p":2147483647,"cam":[0.1,0.2,0.3,1,2,3,100,0.5,0.5,0.001,0.00001],"x":[0.5,-0.5,10],"w":0.9,"feat":[120,80],"min_runs":1,"min_seconds":0}}'
cot_stdin '{"id":1,"kind":"define","module":"ba"}
'"$ba"'
'"$hello" gradbench
expect_status 0
[[ $(printf '%s\n' "$out" | sed -n 2p) == *'input.p: a tensor of shape [2147483647, 2] has 4294967294 elements, more than the limit of 268435456'*'"id":2,"success":false}' ]] ||
  fail "the count over the tensor limit"
expect_hello_served 3 "a count over the tensor limit"

# A non-finite output went out as null with success: now a failure naming it.
cot_stdin '{"id":1,"kind":"define","module":"hello"}
{"id":2,"kind":"evaluate","module":"hello","function":"square","input":1e200}
'"$hello" gradbench
expect_status 0
[[ $(printf '%s\n' "$out" | sed -n 2p) == '{"error":"error: output is inf: JSON has no number for NaN or infinity'*'"id":2,"success":false,"timings":'* ]] ||
  fail "a non-finite output"
expect_hello_served 3 "a non-finite output"

# Running out of memory while handling a message (ba with 2^27 observations is within the
# tensor limit, but not within 3 GB of address space) is that message's answer. A sanitizer's
# build cannot start under such a limit; it skips this part.
if (ulimit -v 3000000 && "$bin" --version) >/dev/null 2>&1; then
  big=${ba/2147483647/134217728}
  last="cotangent gradbench (ulimit -v 3000000)"
  status=0
  (ulimit -v 3000000 && exec "$bin" gradbench) <<<'{"id":1,"kind":"define","module":"ba"}
'"$big"'
'"$hello" >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
  expect_status 0
  [[ $(printf '%s\n' "$out" | sed -n 2p) == '{"error":"out of memory while handling the message'*'"id":2,"success":false}' ]] ||
    fail "out of memory is the message's answer"
  expect_hello_served 3 "running out of memory"
fi

# A response that cannot be written (a full disk, /dev/full) ends the tool with status 1.
if [[ -w /dev/full ]]; then
  last="cotangent gradbench >/dev/full"
  status=0
  "$bin" gradbench <<<'{"id":0,"kind":"start"}' >/dev/full 2>"$tmp/.err" || status=$?
  out=""
  err=$(cat "$tmp/.err")
  expect_status 1
  [[ $err == *"cannot write the response to the message on <stdin> line 1"* ]] ||
    fail "the write error"
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "one line says it"
fi
