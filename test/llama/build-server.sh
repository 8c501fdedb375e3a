#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source the npm package node-llama-cpp ships
# (package/llama/gitRelease.bundle), once per machine: the binary is cached outside the
# clone, under $LMGATE_LLAMA_DIR (default ~/.cache/lmgate/llama-<version>). Prints the
# binary's path. About 13 minutes on 2 cores the first time; instant after.
set -euo pipefail
version="${LMGATE_LLAMA_NPM_VERSION:-3.22.1}"
dir="${LMGATE_LLAMA_DIR:-$HOME/.cache/lmgate/llama-$version}"
bin="$dir/build/bin/llama-server"
if [ -x "$bin" ] && [ -x "$dir/venv-ok" ]; then echo "$bin"; exit 0; fi

mkdir -p "$dir"
cd "$dir"
# A second caller (another test run, a person) waits for the first build instead of
# compiling into the same tree at the same time, then finds it cached.
exec 9>"$dir/.lock"
flock 9
if [ -x "$bin" ] && [ -x "$dir/venv-ok" ]; then echo "$bin"; exit 0; fi
# The caller sees why the build failed without going to find the log.
trap '[ -f build.log ] && { echo "llama-server build failed; the end of $dir/build.log:"; tail -n 40 build.log; } >&2' ERR

# The tools, from Debian's packages where missing (a machine's own root runs this, as CI does).
missing=()
for tool in cmake g++ make git; do command -v "$tool" >/dev/null || missing+=("$tool"); done
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >build.log 2>&1
  apt-get install -y -qq "${missing[@]}" >>build.log 2>&1
fi

if [ ! -d src/.git ]; then
  rm -rf pack src
  mkdir pack
  (cd pack && npm pack --silent "node-llama-cpp@$version" >/dev/null && tar xzf node-llama-cpp-*.tgz)
  git -c advice.detachedHead=false clone -q pack/package/llama/gitRelease.bundle src
  rm -rf pack
fi
# Everything off that would reach the network (the prebuilt web UI, HTTPS) or is not needed.
# The model writer (test/llama/write-model.py) runs the bundle's gguf-py with Debian's
# /usr/bin/python3 and its numpy (installed above): a pyenv python3 earlier on PATH has no
# numpy, and PyPI is out of reach.
cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF >>build.log 2>&1
cmake --build build --target llama-server -j "$(nproc)" >>build.log 2>&1
touch venv-ok && chmod +x venv-ok
echo "$bin"
