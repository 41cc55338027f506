//! The process's CPU time (getrusage), the one call std does not wrap; all `unsafe` of the
//! crate lives here.

use std::mem::MaybeUninit;
use std::time::Duration;

/// CPU time the whole process has used so far, user plus system, every thread (the uTP
/// dispatcher runs on the runtime's threads).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime(Duration);

impl CpuTime {
    /// Now, for this process; zero if the kernel refuses (it does not for RUSAGE_SELF).
    pub fn now() -> Self {
        let mut usage = MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `usage` is a valid, writable rusage; getrusage only writes it.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
        if rc != 0 {
            return Self::default();
        }
        // SAFETY: zero-initialised and, on success, filled in by the kernel.
        let usage = unsafe { usage.assume_init() };
        let span = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        Self(span(usage.ru_utime) + span(usage.ru_stime))
    }

    /// Seconds of CPU spent since `earlier`.
    pub fn seconds_since(&self, earlier: &Self) -> f64 {
        self.0.saturating_sub(earlier.0).as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let start = CpuTime::now();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(CpuTime::now().seconds_since(&start) > 0.0);
        assert_eq!(start.seconds_since(&CpuTime::now()), 0.0);
    }
}
