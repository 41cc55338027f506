#!/usr/bin/env bash
# What the kernel's copy out of the page cache costs by where the destination buffer lies
# within a page: one 1 GiB file on tmpfs, read with `preadv` in 1 MiB pieces into one buffer
# at each destination page offset given, the file offset a multiple of a page (as `udt cp`
# reads). Prints the reader's CPU seconds per GiB, the median of REPS reads per offset.
#
# Why: on AMD EPYC (this lab's machine) a copy whose destination lies 1-31 bytes past its
# source's offset within a page runs at about a quarter of its speed (4K aliasing: each load
# waits on a recent store to the same page offset). A 1 MiB `vec![0; n]` comes from `mmap`
# 16 bytes past a page, so file reads into one were slow until `udt cp`, `udt serve` and
# `UdtStream::send_file` read into page-aligned buffers (BENCHMARKS.md, session 46).
# Each run holds /tmp/udt-bench.lock (flock).
#
#   scripts/bench-copy-alignment.sh [REPS=3] [OFFSETS="0 5 16 21 32 33 64"]
set -euo pipefail
REPS=${1:-3}
OFFSETS=${2:-"0 5 16 21 32 33 64"}
FILE=$(mktemp /dev/shm/udt-bench-align.XXXXXX)
trap 'rm -f "$FILE"' EXIT
head -c 1G /dev/urandom >"$FILE"
exec 9>/tmp/udt-bench.lock
flock 9
python3 - "$FILE" "$REPS" $OFFSETS <<'PY'
import mmap, os, statistics, sys, time
path, reps, offsets = sys.argv[1], int(sys.argv[2]), [int(o) for o in sys.argv[3:]]
bad = [o for o in offsets if not 0 <= o < mmap.PAGESIZE]
if bad:
    sys.exit(f"bench-copy-alignment.sh: offsets must be within a page (0-{mmap.PAGESIZE - 1}), not {bad}")
piece = 1 << 20
size = os.path.getsize(path)
print(f"{size >> 20} MiB from {path}, {piece >> 10} KiB reads, CPU-s/GiB (median of {reps})")
print("| destination page offset | CPU-s/GiB | runs |")
print("|---|---|---|")
for off in offsets:
    buf = mmap.mmap(-1, piece + 2 * mmap.PAGESIZE)  # page-aligned, touched below
    buf[:] = b"\x01" * len(buf)
    view = memoryview(buf)[off:off + piece]
    runs = []
    for _ in range(reps):
        fd = os.open(path, os.O_RDONLY)
        start = time.process_time()
        pos = 0
        while pos < size:
            n = os.preadv(fd, [view], pos)
            if n == 0:
                break
            pos += n
        runs.append((time.process_time() - start) * (1 << 30) / size)
        os.close(fd)
    view.release()
    buf.close()
    print(f"| {off} | {statistics.median(runs):.3f} | {', '.join(f'{r:.3f}' for r in runs)} |")
PY
