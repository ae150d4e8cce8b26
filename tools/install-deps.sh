#!/usr/bin/env bash
# Installs the Debian packages Cotangent builds with, if any are missing. Idempotent and quiet
# when everything is already there.
set -euo pipefail
pkgs=(cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
      clang libclang-rt-14-dev python3
      # The Python package (docs/python.md): built against Debian's /usr/bin/python3, tested
      # with pytest, installable offline with pip.
      python3-dev pybind11-dev python3-numpy python3-scipy python3-pytest python3-pip
      python3-setuptools python3-wheel python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
