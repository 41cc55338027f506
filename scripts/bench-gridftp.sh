#!/usr/bin/env bash
# GridFTP over UDT on Debian's libudt 4.11, on ours (the drop-in libudt.so.0 of
# crates/udt-libudt, through LD_LIBRARY_PATH), and over TCP: 1 GiB memory to memory
# (gsiftp://localhost/dev/zero -> /dev/null) over loopback, REPS runs each, in one run.
#
#   sudo scripts/bench-gridftp.sh [BYTES=1073741824] [REPS=3]
#
# Needs root: it installs the Globus packages if missing (globus-gridftp-server-progs,
# globus-gass-copy-progs, the UDT driver, the proxy tools), adds a system user `udtgrid` for
# the server to map the test identity to (GridFTP refuses root), and runs the server, which
# changes to that user per connection. Everything else lives in a temporary directory:
# a test CA made with openssl, its signing policy, host and user certificates, the user's
# proxy (grid-proxy-init) and the grid-mapfile.
#
# The Globus XIO UDT driver only uses UDT with a threaded server (-threads) and data-channel
# authentication (gsiftp://, DCAU on), and silently falls back to TCP otherwise; so each UDT
# run is confirmed: the client must have sent `SITE SETNETSTACK udt,gsi`, the server's
# transfer log must say BUFFER=0, `ss -uanp` must show the server's UDP sockets during the
# transfer, and the libudt.so.0 mapped in the server's transfer process must be the one
# intended (Debian's or ours).
#
# Each timed run holds /tmp/udt-bench.lock (flock), as other benchmarks on this machine do.
set -euo pipefail
cd "$(dirname "$0")/.."
BYTES=${1:-1073741824}
REPS=${2:-3}
PORT=${GRIDFTP_PORT:-52811}
LOCK=/tmp/udt-bench.lock

if [ "$(id -u)" -ne 0 ]; then
  echo "bench-gridftp: needs root (packages, a system user, the server's setuid)" >&2
  exit 2
fi

need=()
for pkg in globus-gridftp-server-progs globus-gass-copy-progs libglobus-xio-udt-driver \
  globus-proxy-utils openssl iproute2; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
id udtgrid >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin udtgrid

LIB_BUILT=$(scripts/build-libudt.sh)
W=$(mktemp -d /tmp/gridftp-bench.XXXXXX)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
chmod 755 "$W"
# The server loads the UDT driver (and so libudt.so.0) after switching to udtgrid: ours must
# be readable by that user.
mkdir -p "$W/lib"
cp "$LIB_BUILT/libudt.so.0" "$W/lib/"
chmod 755 "$W/lib" && chmod 644 "$W/lib/libudt.so.0"

# ---- a test PKI: CA, signing policy, host and user certificates, proxy, grid-mapfile ----
mkdir -p "$W/certs"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/ca.key" -out "$W/ca.pem" -days 1 \
  -subj "/O=UDT Test/CN=UDT Test CA" 2>/dev/null
HASH=$(openssl x509 -in "$W/ca.pem" -noout -hash)
cp "$W/ca.pem" "$W/certs/$HASH.0"
cat >"$W/certs/$HASH.signing_policy" <<'EOF'
access_id_CA  X509  '/O=UDT Test/CN=UDT Test CA'
pos_rights  globus  CA:sign
cond_subjects  globus  '"/O=UDT Test/*"'
EOF
for who in host user; do
  cn=localhost
  [ "$who" = user ] && cn=tester
  openssl req -newkey rsa:2048 -nodes -keyout "$W/$who.key" -out "$W/$who.csr" \
    -subj "/O=UDT Test/CN=$cn" 2>/dev/null
  openssl x509 -req -in "$W/$who.csr" -CA "$W/ca.pem" -CAkey "$W/ca.key" -CAcreateserial \
    -out "$W/$who.pem" -days 1 2>/dev/null
  chmod 600 "$W/$who.key"
done
export X509_CERT_DIR="$W/certs"
X509_USER_CERT="$W/user.pem" X509_USER_KEY="$W/user.key" \
  grid-proxy-init -out "$W/proxy.pem" -hours 2 >/dev/null
echo '"/O=UDT Test/CN=tester" udtgrid' >"$W/grid-mapfile"
export X509_USER_PROXY="$W/proxy.pem"

# ---- the server, threaded, UDT allowed; started on Debian's libudt or on ours ----
start_server() { # $1: "debian" or "ours"
  local env=()
  [ "$1" = ours ] && env=(LD_LIBRARY_PATH="$W/lib")
  rm -f "$W/transfer.log"
  env "${env[@]}" X509_USER_CERT="$W/host.pem" X509_USER_KEY="$W/host.key" \
    GRIDMAP="$W/grid-mapfile" globus-gridftp-server -p "$PORT" -threads 2 \
    -dc-whitelist udt,gsi,tcp -log-level error,warn,info,transfer \
    -Z "$W/transfer.log" -l "$W/server.log" >"$W/server.out" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 50); do ss -ltn | grep -q ":$PORT " && return 0; sleep 0.1; done
  echo "bench-gridftp: the server did not start: $(cat "$W/server.out")" >&2
  exit 1
}
stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# While a transfer runs (until $W/done appears), every 0.1 s: the UDP sockets of the
# server's processes, and which libudt.so.0 its processes (the daemon and the transfer
# process it forks) have mapped.
watch_transfer() {
  : >"$W/ss.txt"
  : >"$W/maps.txt"
  while [ ! -e "$W/done" ]; do
    ss -uanp 2>/dev/null | grep "globus-gridftp" >>"$W/ss.txt" || true
    for pid in $(pgrep -f "globus-gridftp-server -p $PORT" || true); do
      grep -h "libudt" "/proc/$pid/maps" 2>/dev/null | awk '{print $6}' >>"$W/maps.txt" || true
    done
    sleep 0.1
  done
}

# One timed copy; prints the seconds. $1: label, $2: client library, $3...: extra flags.
copy() {
  local label=$1 lib=$2
  shift 2
  local env=()
  [ "$lib" = ours ] && env=(LD_LIBRARY_PATH="$W/lib")
  exec 9>"$LOCK"
  flock 9
  rm -f "$W/done"
  watch_transfer &
  local watcher=$!
  local t0 t1
  t0=$(date +%s.%N)
  env "${env[@]}" globus-url-copy -dbg "$@" -len "$BYTES" \
    "gsiftp://localhost:$PORT/dev/zero" file:///dev/null >"$W/client.dbg" 2>&1
  t1=$(date +%s.%N)
  touch "$W/done"
  wait "$watcher" || true
  flock -u 9
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

# Fail unless the last transfer used UDT on the intended library.
confirm_udt() { # $1: "debian" or "ours"
  grep -q "SITE SETNETSTACK udt" "$W/client.dbg" ||
    { echo "bench-gridftp: the client did not ask for UDT" >&2; exit 1; }
  tail -1 "$W/transfer.log" | grep -q "BUFFER=0" ||
    { echo "bench-gridftp: transfer log lacks BUFFER=0: $(tail -1 "$W/transfer.log")" >&2; exit 1; }
  [ -s "$W/ss.txt" ] ||
    { echo "bench-gridftp: no UDP socket of the server during the transfer" >&2; exit 1; }
  local want
  want=$(realpath -e /usr/lib/x86_64-linux-gnu/libudt.so.0 2>/dev/null || realpath -e /usr/lib/libudt.so.0)
  [ "$1" = ours ] && want="$W/lib/libudt.so.0"
  local mapped
  mapped=$(sort -u "$W/maps.txt" | tr '\n' ' ')
  [ "$mapped" = "$want " ] ||
    { echo "bench-gridftp: the server mapped '$mapped', not '$want'" >&2; exit 1; }
}

confirm_tcp() {
  if grep -q "SITE SETNETSTACK udt" "$W/client.dbg"; then
    echo "bench-gridftp: the TCP run asked for UDT" >&2
    exit 1
  fi
}

declare -A RESULTS
run() { # $1: name, $2: server/client library, $3: udt|tcp
  local name=$1 lib=$2 proto=$3
  start_server "$lib"
  local flags=()
  [ "$proto" = udt ] && flags=(-udt)
  for i in $(seq "$REPS"); do
    local secs
    secs=$(copy "$name" "$lib" "${flags[@]}")
    if [ "$proto" = udt ]; then confirm_udt "$lib"; else confirm_tcp; fi
    grep -q "NBYTES=$BYTES" "$W/transfer.log" ||
      { echo "bench-gridftp: $name run $i did not move $BYTES bytes" >&2; exit 1; }
    echo "$name run $i: $secs s" >&2
    RESULTS[$name]+="$secs "
  done
  stop_server
}

run "udt-libudt" debian udt
run "udt-ours" ours udt
run "tcp" debian tcp

python3 - "$BYTES" "${RESULTS[udt-libudt]}" "${RESULTS[udt-ours]}" "${RESULTS[tcp]}" <<'PY'
import statistics, sys
nbytes = int(sys.argv[1])
rows = [("GridFTP over UDT, Debian libudt 4.11", sys.argv[2]),
        ("GridFTP over UDT, ours (LD_LIBRARY_PATH)", sys.argv[3]),
        ("GridFTP over TCP", sys.argv[4])]
print(f"| {nbytes} B memory to memory | seconds (median) | runs | Gbit/s |")
print("|---|---|---|---|")
for label, runs in rows:
    t = [float(x) for x in runs.split()]
    m = statistics.median(t)
    print(f"| {label} | {m:.2f} | {', '.join(f'{x:.2f}' for x in t)} | {nbytes * 8 / m / 1e9:.2f} |")
PY
