#!/usr/bin/env bash
# Output is never lost silently (issue 25, break 8): standard output is checked after flushing
# (`> /dev/full` exits 1 with the reason), and files (--output JSON or .npy, emit's .h/.cpp)
# are written whole or not at all: a failed write exits 1, leaves the previous file as it was
# and no temporary behind. A full disk is simulated with /dev/full and with a file size limit
# (ulimit -f, with SIGXFSZ ignored so that the write fails with EFBIG), which binds root too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >m.cot <<'COT'
def twice(x: f64[n]) -> f64[n] {
  for i. x[i] * 1.1
}
def total(x: f64[n]) -> f64 {
  sum i. x[i]
}
COT
python3 -c 'import json; print(json.dumps({"x": [0.1 * k for k in range(3000)]}))' >big.json
echo '{"x": [1, 2]}' >small.json

# cot_limited ARGS...: as cot, with files limited to 4 KiB.
cot_limited() {
  last="(ulimit -f 4) cotangent $*"
  status=0
  (
    trap '' XFSZ
    ulimit -f 4
    exec "$bin" "$@"
  ) </dev/null >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
}

# Standard output on a full device: exit 1 and the reason, for every command that prints.
for args in "run m.cot total --input small.json --backend interp" \
  "grad m.cot total --input small.json --backend interp" "print m.cot twice" "--help" \
  "cost m.cot total --input small.json"; do
  last="cotangent $args >/dev/full"
  status=0
  # shellcheck disable=SC2086
  "$bin" $args </dev/null >/dev/full 2>"$tmp/.err" || status=$?
  out=""
  err=$(cat "$tmp/.err")
  expect_status 1
  expect_err_contains "cannot write to standard output: No space left on device"
done
# A large result to standard output in a file that cannot grow.
last="cotangent run m.cot twice --input big.json >stdout.txt (ulimit -f 4)"
status=0
(
  trap '' XFSZ
  ulimit -f 4
  exec "$bin" run m.cot twice --input big.json --backend interp
) </dev/null >stdout.txt 2>"$tmp/.err" || status=$?
err=$(cat "$tmp/.err")
expect_status 1
expect_err_contains "cannot write to standard output: File too large"

# --output on a full device: JSON, and .npy through a symbolic link to it.
cot run m.cot total --input small.json --backend interp --output /dev/full
expect_status 1
expect_err_contains "/dev/full: error: cannot write the file: No space left on device"
ln -s /dev/full full.npy
cot run m.cot twice --input small.json --backend interp --output full.npy
expect_status 1
expect_err_contains "full.npy: error: cannot write the file: No space left on device"
[[ -L full.npy ]] || fail "the link to /dev/full was replaced"

# --output /dev/stdout writes to the descriptor (redirected here) at its offset, as standard
# output would, not over the file nor from its start.
last="cotangent run ... --output /dev/stdout >so.txt"
status=0
"$bin" run m.cot total --input small.json --backend interp --output /dev/stdout >so.txt || status=$?
expect_status 0
[[ $(cat so.txt) == '{"result": 3}' ]] || fail "so.txt holds $(cat so.txt)"
{
  echo 'before'
  "$bin" run m.cot total --input small.json --backend interp --output /dev/stdout
  echo 'after'
} >so.txt
[[ $(tr '\n' ' ' <so.txt) == 'before {"result": 3} after ' ]] ||
  fail "the redirected file was replaced: $(cat so.txt)"
cot run m.cot total --input small.json --backend interp --output ''
expect_status 1
expect_err_contains "error: cannot write a file with an empty name"

# A failed write keeps the previous file whole and leaves no temporary.
mkdir outs
echo 'previous' >outs/r.json
cp outs/r.json outs/r.npy
cot_limited run m.cot twice --input big.json --backend interp --output outs/r.json
expect_status 1
expect_err_contains "outs/r.json: error: cannot write the file: File too large"
expect_err_contains "the file is unchanged"
cot_limited run m.cot twice --input big.json --backend interp --output outs/r.npy
expect_status 1
expect_err_contains "outs/r.npy: error: cannot write the file: File too large"
[[ $(cat outs/r.json) == previous && $(cat outs/r.npy) == previous ]] ||
  fail "a failed write changed the previous file"
[[ $(ls -A outs | tr '\n' ' ') == "r.json r.npy " ]] || fail "temporaries left: $(ls -A outs)"

# A successful write replaces the file, keeps its permissions and leaves no temporary; through
# a symbolic link it replaces the file the link names and keeps the link.
chmod 640 outs/r.json
cot run m.cot total --input small.json --backend interp --output outs/r.json
expect_status 0
[[ $(cat outs/r.json) == '{"result": 3}' ]] || fail "r.json holds $(cat outs/r.json)"
[[ $(stat -c %a outs/r.json) == 640 ]] || fail "the permissions changed: $(stat -c %a outs/r.json)"
ln -s outs/r.json link.json
cot run m.cot total --input big.json --backend interp --output link.json
expect_status 0
[[ -L link.json && $(cat outs/r.json) == '{"result": 44985'* ]] ||
  fail "writing through the link: $(cat outs/r.json)"
[[ $(ls -A outs | tr '\n' ' ') == "r.json r.npy " ]] || fail "temporaries left: $(ls -A outs)"

# A directory, or a directory that does not exist, is an error with the reason.
cot run m.cot total --input small.json --backend interp --output outs
expect_status 1
expect_err_contains "outs: error: cannot write the file: it is a directory"
cot run m.cot total --input small.json --backend interp --output no/such/r.json
expect_status 1
expect_err_contains "cannot create a temporary file in no/such to write the file: No such file or directory"

# emit writes both files or neither.
cot emit m.cot twice -o gen
expect_status 0
cp gen/cot_fn_twice.h h.before
cp gen/cot_fn_twice.cpp cpp.before
cot_limited emit m.cot total -o gen
expect_status 1
expect_err_contains "error: cannot write the file: File too large"
[[ ! -e gen/cot_fn_total.h && ! -e gen/cot_fn_total.cpp ]] || fail "emit left half a pair"
echo 'stale' >gen/cot_fn_total.h
cot_limited emit m.cot total -o gen
expect_status 1
[[ $(cat gen/cot_fn_total.h) == stale ]] || fail "a failed emit replaced the header alone"
cmp -s h.before gen/cot_fn_twice.h && cmp -s cpp.before gen/cot_fn_twice.cpp ||
  fail "emit changed another function's files"
[[ $(ls -A gen | tr '\n' ' ') == "cot_fn_total.h cot_fn_twice.cpp cot_fn_twice.h " ]] ||
  fail "temporaries left: $(ls -A gen)"
touch gen-file
cot emit m.cot total -o gen-file/sub
expect_status 1
expect_err_contains "gen-file/sub: error: cannot create the directory"

# Where permissions bind (not as root): a directory that cannot be written to.
if [[ $(id -u) != 0 ]]; then
  mkdir ro
  echo 'previous' >ro/r.json
  chmod 555 ro
  cot run m.cot total --input small.json --backend interp --output ro/r.json
  chmod 755 ro
  expect_status 1
  expect_err_contains "cannot create a temporary file in ro to write the file: Permission denied"
  [[ $(cat ro/r.json) == previous ]] || fail "the previous file changed"
fi
echo "ok"
