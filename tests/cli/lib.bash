# Helpers for the command-line tests (sourced by tests/cli/*.sh; not a test itself).
# Each test is run by ctest as: bash test.sh <path-to-cotangent> <source-dir>
# A test exits non-zero with a message on its first failure.

if [[ $# -ne 2 ]]; then
  echo "usage: bash $0 <path-to-cotangent> <source-dir>" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src_dir=$2
if [[ ! -x $bin ]]; then
  echo "error: $bin is not an executable" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# The last command's exit status, standard output and standard error.
status=0
out=""
err=""
last=""

# cot ARGS...: runs the binary, standard input from /dev/null.
cot() {
  last="cotangent $*"
  status=0
  "$bin" "$@" </dev/null >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
}

# cot_stdin TEXT ARGS...: runs the binary with TEXT on standard input.
cot_stdin() {
  local text=$1
  shift
  last="cotangent $* <<< '$text'"
  status=0
  "$bin" "$@" <<<"$text" >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
}

fail() {
  {
    echo "FAIL ($(basename "$0")): $1"
    echo "  command: $last"
    echo "  exit status: $status"
    echo "  --- stdout:"
    printf '%s\n' "$out"
    echo "  --- stderr:"
    printf '%s\n' "$err"
  } >&2
  exit 1
}

expect_status() {
  [[ $status -eq $1 ]] || fail "expected exit status $1"
}
expect_out() {
  [[ $out == "$1" ]] || fail "expected standard output: $1"
}
expect_out_contains() {
  [[ $out == *"$1"* ]] || fail "expected standard output to contain: $1"
}
expect_err_empty() {
  [[ -z $err ]] || fail "expected empty standard error"
}
expect_out_empty() {
  [[ -z $out ]] || fail "expected empty standard output"
}
expect_err_contains() {
  [[ $err == *"$1"* ]] || fail "expected standard error to contain: $1"
}
# The first line of standard error matches the extended regular expression $1.
expect_err_first_line() {
  local first=${err%%$'\n'*}
  [[ $first =~ $1 ]] || fail "expected the first line of standard error to match: $1"
}

# write_npy PATH DESCR SHAPE VALUES: a NumPy .npy file (format 1.0, little endian), e.g.
#   write_npy x.npy '<f8' '3' '1.0 2.0 3.0'    write_npy A.npy '<i8' '2,2' '1 2 3 4'
write_npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, descr, shape, values = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
dims = [int(d) for d in shape.split(",") if d.strip()]
shape_text = "(%d,)" % dims[0] if len(dims) == 1 else "(" + ", ".join(str(d) for d in dims) + ")"
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
pad = (64 - (10 + len(header) + 1) % 64) % 64
header += " " * pad + "\n"
fmt = {"<f8": "<d", "<f4": "<f", "<i8": "<q", "|b1": "<?"}[descr]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    for v in values:
        f.write(struct.pack(fmt, float(v) if fmt in ("<d", "<f") else int(v)))
PY
}

# read_npy PATH: prints "DESCR SHAPE v1 v2 ..." (reals with repr) for a .npy file.
read_npy() {
  python3 - "$1" <<'PY'
import ast, struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:6] == b"\x93NUMPY", "not a .npy file"
major = data[6]
if major == 1:
    (hlen,) = struct.unpack("<H", data[8:10]); start = 10
else:
    (hlen,) = struct.unpack("<I", data[8:12]); start = 12
header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
assert (start + hlen) % 64 == 0, "data is not 64-byte aligned"
descr, shape = header["descr"], header["shape"]
fmt = {"<f8": "<d", "<f4": "<f", "<i8": "<q", "|b1": "<?"}[descr]
n = 1
for d in shape:
    n *= d
size = struct.calcsize(fmt)
body = data[start + hlen:]
assert len(body) == n * size, "payload size %d, expected %d" % (len(body), n * size)
vals = [struct.unpack(fmt, body[k * size:(k + 1) * size])[0] for k in range(n)]
print(descr, ",".join(str(d) for d in shape), " ".join(repr(v) for v in vals))
PY
}
