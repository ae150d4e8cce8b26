#!/usr/bin/env bash
# The native compile cache from the command line (docs/design.md §10, the compile cache; issue
# 25's breaks 4, 5 and 11): a cache directory others can write is refused with a plain error
# that says how to fix it; a truncated object is rebuilt, not a crash on every run; stale
# temporaries of killed compiles are swept; a cache that cannot be created or written is an
# error with the system's reason, never an internal error.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >m.cot <<'COT'
def f(x: f64[n]) -> f64 { sum i. x[i] * x[i] }
def g(x: f64[n]) -> f64 { sum i. x[i] + x[i] }
COT
echo '{"x": [1, 2, 3]}' >in.json
mkdir cache
chmod 700 cache
export COTANGENT_CACHE_DIR=$tmp/cache

expect_no_internal_error() {
  [[ $err != *"internal error"* ]] || fail "expected no internal error"
}

# Writable by others (with or without the sticky bit): refused, nothing compiled or loaded.
for mode in 777 770 1777; do
  chmod "$mode" cache
  cot run m.cot f --input in.json
  expect_status 1
  expect_out_empty
  expect_err_contains "error: the compile cache directory $tmp/cache is writable by group or others"
  expect_err_contains "chmod go-w $tmp/cache"
  expect_no_internal_error
  [[ -z $(ls cache) ]] || fail "expected nothing written into a refused cache"
done
chmod 700 cache

cot run m.cot f --input in.json
expect_status 0
expect_out '{"result": 14}'
objects=(cache/*.so)
[[ ${#objects[@]} -eq 1 ]] || fail "expected one object in the cache"
so=${objects[0]}
size=$(stat -c %s "$so")
[[ $(stat -c %a "$so") == 600 ]] || fail "expected the object to have mode 600"

# A damaged object (cut short, emptied, not ELF) is rebuilt on the next run.
for cut in $((size / 2)) $((size - 1)) 40 0; do
  truncate -s "$cut" "$so"
  cot run m.cot f --input in.json
  expect_status 0
  expect_out '{"result": 14}'
  [[ $(stat -c %s "$so") -eq $size ]] || fail "expected the object cut to $cut bytes rebuilt"
done
echo 'not an object' >"$so"
cot bench m.cot f --input in.json --runs 1
expect_status 0
expect_out_contains '"cache_hit": false'
cot bench m.cot f --input in.json --runs 1
expect_out_contains '"cache_hit": true'

# Temporaries a killed compile left: swept by the next compile once an hour old.
key=0123456789abcdef0123456789abcdef
touch "cache/$key.tmp-1-a.cpp" "cache/$key.tmp-1-a.so" "cache/$key.tmp-2-b.cpp"
touch -d '2 hours ago' "cache/$key.tmp-1-a.cpp" "cache/$key.tmp-1-a.so"
cot run m.cot g --input in.json
expect_status 0
expect_out '{"result": 12}'
[[ ! -e cache/$key.tmp-1-a.cpp && ! -e cache/$key.tmp-1-a.so ]] || fail "expected stale temporaries swept"
[[ -e cache/$key.tmp-2-b.cpp ]] || fail "expected a fresh temporary kept"

# A cache that cannot be created: the path and the system's reason.
COTANGENT_CACHE_DIR=$tmp/in.json/cache cot run m.cot f --input in.json
expect_status 1
expect_err_contains "error: cannot create the compile cache directory $tmp/in.json/cache: Not a directory"
expect_err_contains "help: set COTANGENT_CACHE_DIR"
expect_no_internal_error

# A cache that cannot be written: the path and the system's reason. Root writes anywhere, so
# as root the run is nobody's, in a directory nobody owns but cannot write.
mkdir ro
if [[ $(id -u) -eq 0 ]]; then
  command -v setpriv >/dev/null || exit 0
  chmod 755 "$tmp"
  chown 65534:65534 ro
  chmod 500 ro
  last="setpriv cotangent run m.cot f (in a read-only cache)"
  status=0
  COTANGENT_CACHE_DIR=$tmp/ro setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$bin" run m.cot f --input in.json </dev/null >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
else
  chmod 500 ro
  COTANGENT_CACHE_DIR=$tmp/ro cot run m.cot f --input in.json
fi
expect_status 1
expect_err_contains "in the compile cache $tmp/ro: Permission denied"
expect_no_internal_error
chmod 700 ro

# A compiler ended by a signal (the out-of-memory killer, a limit) is the toolchain's trouble, not
# an internal error, and leaves nothing behind. This one answers the identity questions and then
# kills itself.
mkdir killed && chmod 700 killed
printf '#!/bin/sh\ncase "$*" in *-###*|*--version*) exec c++ "$@";; esac\nkill -9 $$\n' >killcxx
chmod +x killcxx
COTANGENT_CACHE_DIR=$tmp/killed COTANGENT_CXX=$tmp/killcxx cot run m.cot g --input in.json
expect_status 1
expect_err_contains "error: the C++ compiler \`$tmp/killcxx\` was ended by signal 9 (Killed) while compiling"
expect_no_internal_error
[[ -z $(ls -A killed) ]] || fail "a killed compile left files: $(ls -A killed)"

echo "native_cache.sh: ok"
