"""The machine's busy CPU seconds from scripts/lib/machine-cpu.sh's snapshots."""
import os

NCPU = os.cpu_count()
USER_HZ = os.sysconf("SC_CLK_TCK")


def _snapshots(path):
    """[(busy CPU-s of the machine so far, time)]: the wall clock on every CPU less the
    idle, iowait and steal time."""
    v = [float(x) for x in open(path).read().split()]
    return [(v[i + 1] * NCPU - v[i] / USER_HZ, v[i + 1]) for i in range(0, len(v) - 1, 2)]


def _first_two(path):
    (c0, t0), (c1, t1) = _snapshots(path)[:2]
    return c1 - c0, t1 - t0


def idle_rate(path):
    """The quiet machine's busy CPU-s per second (cpu_idle_rate's file), 0 if unreadable."""
    try:
        busy, secs = _first_two(path)
        return busy / secs
    except (OSError, ValueError, ZeroDivisionError):
        return 0.0


def busy_seconds(path, idle):
    """The machine's busy CPU-s between a flow's two snapshots, less the idle machine's
    rate `idle` over that time; None if the file is missing or short."""
    try:
        busy, secs = _first_two(path)
        return max(0.0, busy - idle * secs)
    except (OSError, ValueError):
        return None
