# shellcheck shell=bash
# Shared by the bench/run_*.sh scripts (sourced, not run): the build of the benchmarks in
# their own build directory, and a description of the machine.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_BUILD="$(realpath -m "${BENCH_BUILD:-$ROOT/build-bench}")"
OUT="$BENCH_BUILD/results"

# Configures $BENCH_BUILD (RelWithDebInfo, COTANGENT_BENCH=ON, no tests) if needed and builds
# only the targets named.
bench_build() {
  bash "$ROOT/tools/install-deps.sh"
  if [ ! -f "$BENCH_BUILD/CMakeCache.txt" ]; then
    local gen=()
    if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
    cmake -S "$ROOT" -B "$BENCH_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCOTANGENT_BENCH=ON -DCOTANGENT_TESTS=OFF >/dev/null
  fi
  cmake --build "$BENCH_BUILD" -j "${JOBS:-$(nproc)}" --target "$@" >&2
  mkdir -p "$OUT"
}

# Debian's PyTorch and matplotlib for /usr/bin/python3 (not a pyenv python3 earlier on PATH).
bench_python_deps() {
  if ! /usr/bin/python3 -c "import torch, matplotlib" 2>/dev/null; then
    echo "installing python3-torch python3-matplotlib (a few minutes)" >&2
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch python3-matplotlib >/dev/null
  fi
}

# One markdown line: cores, CPU, memory, load, commit.
bench_machine() {
  local cpu mem commit dirty=""
  cpu="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  mem="$(free -g | awk '/^Mem:/ {print $2}')"
  commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ]; then dirty=" + uncommitted changes"; fi
  echo "$(nproc) cores ($cpu), ${mem} GB RAM, $(uname -sr); load average before the run: $(cut -d' ' -f1-3 /proc/loadavg); commit $commit$dirty; $(date -u '+%Y-%m-%d %H:%M UTC')."
}
