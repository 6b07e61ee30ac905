#!/usr/bin/env bash
# Proves the README's Quick start where a new user starts: a fresh `git clone`, the machine's own
# PATH (Debian's Node 20 first), no npm_config_nodedir. Runs the install part of the second
# command (which covers the first's), then the first command's server, asks it /healthz and stops
# it; checks that the NFC module loads under the Node that npm scripts run. CI runs it
# (.ci/run); it reuses the npm cache, so it costs one `npm ci` (about 2 minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "quick start: $*" >&2; exit 1; }

# The same reading of the README as the stop hook: the first fenced block under "## Quick start",
# without comments and blank lines.
mapfile -t lines < <(awk '/^## Quick start/{f=1;next} f&&/^## /{exit} f&&/^```/{if(c){exit} c=1;next} c{print}' "$root/README.md" | grep -v '^\s*#' | grep -v '^\s*$')
[ ${#lines[@]} -eq 2 ] || fail "README.md's Quick start block must hold exactly two commands (found ${#lines[@]})"
serve_line=${lines[0]}
test_line=${lines[1]}

# Each command is "install steps && run step"; the first's install steps must be among the second's.
split() { awk -v s="$1" 'BEGIN { n = split(s, a, / && /); for (i = 1; i <= n; i++) print a[i] }'; }
mapfile -t serve_steps < <(split "$serve_line")
mapfile -t test_steps < <(split "$test_line")
for step in "${serve_steps[@]:0:${#serve_steps[@]}-1}"; do
  printf '%s\n' "${test_steps[@]}" | grep -qxF -- "$step" || fail "the serve command's step '$step' is not part of the test command's install"
done
install=$(printf '%s && ' "${test_steps[@]:0:${#test_steps[@]}-1}"); install=${install% && }
run_server=${serve_steps[-1]}

work=$(mktemp -d /tmp/waymark-quickstart.XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -TERM -- "-$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

git clone -q --no-hardlinks "$root" "$work/waymark"
cd "$work/waymark"
# The machine's PATH as a new login has it: no Node from a tools folder, no node_modules/.bin.
machine_env=(env -u npm_config_nodedir -u NODE_OPTIONS PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
echo "quick start: fresh clone in $work/waymark, PATH's node is $("${machine_env[@]}" node --version 2>/dev/null || echo 'missing')"

echo "quick start: $install"
"${machine_env[@]}" bash -c "$install" >"$work/install.log" 2>&1 || { tail -n 20 "$work/install.log" >&2; fail "the install part of '$test_line' failed (log above)"; }
grep -E '^(NFC unavailable|Waymark needs)' "$work/install.log" && fail "the install did not set everything up (line above)"

nfc=$("${machine_env[@]}" npm exec --silent -- node -e 'require("@pokusew/pcsclite"); console.log(process.version)' 2>&1) \
  || fail "nfc-pcsc's native module does not load under npm's Node: $nfc"
echo "quick start: npm scripts run Node $nfc, with the NFC module built for it"

echo "quick start: $run_server"
# Port 0 and a scratch data dir through the WAYMARK_* variables: the command itself is unchanged.
setsid "${machine_env[@]}" WAYMARK_PORT=0 WAYMARK_DATA="$work/data" bash -c "$run_server" >"$work/serve.log" 2>&1 &
server_pid=$!
url=
for _ in $(seq 1 600); do
  url=$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$work/serve.log" | head -n1 | sed 's/listening on //') || true
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "'$run_server' exited before listening"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/serve.log" >&2; fail "'$run_server' did not listen within 60 s"; }
status=$("${machine_env[@]}" node -e 'fetch(process.argv[1]).then((r) => console.log(r.status), (e) => console.log(e.message))' "$url/healthz")
[ "$status" = 200 ] || { cat "$work/serve.log" >&2; fail "GET $url/healthz answered $status"; }
kill -TERM -- "-$server_pid"
wait "$server_pid" || true
server_pid=
echo "quick start: ok ($url/healthz answered 200)"
