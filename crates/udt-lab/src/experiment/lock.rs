//! Taking turns with other work on a shared machine: when `UDT_LAB_LOCK` names a file, each
//! run of an experiment holds an exclusive `flock` on it while its flows move data.
//!
//! Why per run and not per experiment: a full grid takes tens of minutes, and the builds and
//! benchmarks beside it (which take the same lock, shared or exclusive) should slip in
//! between runs rather than wait for the end or disturb a measurement. The lab's link
//! set-up and the reports are not timed and run outside the lock.
//!
//! `flock` grants a shared lock while an exclusive one waits, so overlapping builds could
//! starve a run forever. A turnstile (`FILE.turn`) prevents it: a run holds the turnstile
//! exclusively until it has the lock, and shared holders are expected to pass through the
//! turnstile (`flock FILE.turn true`) before taking theirs.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;

use anyhow::Context;

/// The variable naming the lock file (for example `/tmp/udt-bench.lock`).
pub const ENV_LOCK: &str = "UDT_LAB_LOCK";

/// Held while a run measures; the lock goes with the file when dropped.
#[derive(Debug)]
pub struct Turn {
    _file: Option<File>,
}

/// Waits for the exclusive lock named by [`ENV_LOCK`], if any.
pub fn exclusive_turn() -> anyhow::Result<Turn> {
    exclusive_turn_on(std::env::var_os(ENV_LOCK))
}

/// Waits for the exclusive lock on `path`; `None` or empty: no lock.
fn exclusive_turn_on(path: Option<std::ffi::OsString>) -> anyhow::Result<Turn> {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Ok(Turn { _file: None });
    };
    let mut turnstile = path.clone();
    turnstile.push(".turn");
    let turnstile = lock_exclusive(&turnstile)?;
    let file = lock_exclusive(&path)?;
    drop(turnstile);
    Ok(Turn { _file: Some(file) })
}

/// Opens (creating) `path` and waits for an exclusive `flock` on it.
fn lock_exclusive(path: &std::ffi::OsStr) -> anyhow::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening the lock file {path:?} ({ENV_LOCK})"))?;
    loop {
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).with_context(|| format!("locking {path:?} ({ENV_LOCK})"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_turn_excludes_another_holder_until_dropped() {
        let path = std::env::temp_dir().join(format!("udt-lab-lock-{}", std::process::id()));
        let turn = exclusive_turn_on(Some(path.clone().into())).expect("first turn");
        let other = File::open(&path).expect("open");
        // SAFETY: flock on an open descriptor.
        let try_lock =
            |f: &File| unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_ne!(try_lock(&other), 0, "the lock is held");
        drop(turn);
        assert_eq!(try_lock(&other), 0, "the lock is free again");
        let turnstile = File::open(format!("{}.turn", path.display())).expect("turnstile");
        assert_eq!(try_lock(&turnstile), 0, "the turnstile was let go");
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(format!("{}.turn", path.display()));
    }
}
