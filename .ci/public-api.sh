#!/usr/bin/env bash
# The public API of the published crates, as cargo-public-api lists it, compared with the listing
# committed beside each crate (`<crate>/public-api.txt`): a change to the surface is always a
# visible diff in review, and CI fails until the listing is updated with it.
#   bash .ci/public-api.sh              check; prints the diff and fails when the API changed
#   HPD_BLESS=1 bash .ci/public-api.sh  rewrite the listings (review them like code)
# cargo-public-api reads rustdoc's JSON output, which only a nightly rustdoc writes; the nightly
# is pinned so that the listing changes with the code, never with rustdoc. Both are installed
# when missing: the tool into ~/.cache/hpd-tools (cargo install), the nightly through rustup
# (minimal profile: rustc, rustdoc, cargo).
set -euo pipefail
cd "$(dirname "$0")/.."

tool_version=0.52.0
nightly=nightly-2026-05-20
root="$HOME/.cache/hpd-tools"
bin="$root/bin/cargo-public-api"

if ! { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $tool_version"; }; then
  echo "installing cargo-public-api $tool_version into $root" >&2
  cargo install --locked --quiet --version "$tool_version" --root "$root" cargo-public-api
fi
# The pinned nightly by its rustup name, else a `nightly` toolchain that is the same build (the
# commit below), else installed through rustup.
nightly_commit=e50aa6fba
if ! rustup run "$nightly" rustc --version >/dev/null 2>&1; then
  if rustup run nightly rustc --version 2>/dev/null | grep -q "($nightly_commit "; then
    nightly=nightly
  else
    echo "installing the $nightly toolchain (minimal profile)" >&2
    rustup toolchain install "$nightly" --profile minimal --no-self-update >&2
  fi
fi

status=0
for crate in hpd-agent hpd-agent-macros; do
  listing="$crate/public-api.txt"
  fresh=$(mktemp)
  # -ss: no blanket impls (`impl<T> From<T> for T`) or auto-trait impls (`Send`, `Unpin`), which
  # change with private fields; derived impls (Clone, Debug, serde) stay, as users rely on them.
  PATH="$root/bin:$PATH" cargo "+$nightly" public-api -p "$crate" --all-features -ss \
    --color never >"$fresh"
  if [ "${HPD_BLESS:-}" = 1 ]; then
    mv "$fresh" "$listing"
    echo "wrote $listing ($(wc -l <"$listing") lines)"
  elif ! diff -u "$listing" "$fresh"; then
    echo "the public API of $crate differs from $listing (above); if the change is meant," >&2
    echo "run HPD_BLESS=1 bash .ci/public-api.sh and commit the listing with it" >&2
    rm -f "$fresh"
    status=1
  else
    rm -f "$fresh"
    echo "$crate: public API as listed in $listing"
  fi
done
exit "$status"
