#!/usr/bin/env bash
# Installs the Debian packages the tests need (README "Quick start", second line; CI runs it too).
# Nothing to do when they are all installed; otherwise apt-get as root (or through sudo -n).
# Anything it cannot do ends with one line saying so, and a non-zero exit: the tests would
# otherwise run without them (and under CI=true a missing package fails the run anyway).
set -uo pipefail

# chromium: e2e and browser tests; pcscd + vsmartcard-vpcd + libpcsclite-dev: NFC on the real
# PC/SC stack (and nfc-pcsc's native build); zbar-tools + poppler-utils: printing and QR checks;
# postgresql: the private test cluster (scripts/with-postgres.ts); iproute2 + util-linux:
# namespaces and tmpfs mounts; python3, make, g++: node-gyp.
packages=(chromium pcscd libpcsclite-dev vsmartcard-vpcd zbar-tools poppler-utils postgresql
  iproute2 util-linux python3 make g++)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "test packages: all installed"
  exit 0
fi

fail() { echo "test packages: cannot install ${missing[*]}: $1" >&2; exit 1; }
command -v apt-get >/dev/null 2>&1 || fail "no apt-get on this machine (Debian/Ubuntu expected); install them by hand"
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  fail "needs root (or sudo without a password) for apt-get"
fi

echo "test packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! "${as_root[@]}" apt-get update -qq >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  fail "apt-get update failed"
fi
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  fail "apt-get install failed"
fi
rm -f "$log"
echo "test packages: installed"
