//! Named network namespaces: creation, running code and commands inside one, and cleanup.
//!
//! **Choice:** namespaces are made and configured with the `ip` command (iproute2), which does
//! the fiddly parts right (`/run/netns` as a shared bind mount, netlink address and link
//! setup), and they get names (`udtlab-<pid>-<n>-a`) so a user can `ip netns exec` into a
//! running lab. The TUN fds cannot come from a child process, so they are opened by a helper
//! thread that `setns`es into the namespace ([`Namespace::run`]); the fds then live in the lab
//! process in the root namespace.
//!
//! **Cleanup on every exit path:** [`Namespace`]'s `Drop` kills what still runs inside and
//! deletes the name (the namespace itself then vanishes with its last user). Children get
//! `PR_SET_PDEATHSIG`, so they die with the lab even on `SIGKILL`. What a killed lab still
//! leaves behind, the name, is removed by [`clean_leftovers`] at the next start: the pid in the
//! name tells whether its owner is alive.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{bail, Context};

/// Where iproute2 keeps named namespaces.
const NETNS_DIR: &str = "/run/netns";

/// The prefix of every namespace name a lab creates.
pub const NAME_PREFIX: &str = "udtlab-";

/// The lab lacks the privileges it needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the lab needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) for network namespaces and TUN devices: run it with sudo"
)]
pub struct NotPrivileged;

/// Checks the effective capabilities for namespaces (`CAP_SYS_ADMIN`: `setns`, the bind
/// mount of a name) and TUN devices and addresses (`CAP_NET_ADMIN`).
pub fn check_privileges() -> Result<(), NotPrivileged> {
    const CAP_NET_ADMIN: u32 = 12;
    const CAP_SYS_ADMIN: u32 = 21;
    let status = std::fs::read_to_string("/proc/self/status").map_err(|_| NotPrivileged)?;
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .ok_or(NotPrivileged)?;
    let needed = (1u64 << CAP_NET_ADMIN) | (1u64 << CAP_SYS_ADMIN);
    if caps & needed == needed {
        Ok(())
    } else {
        Err(NotPrivileged)
    }
}

/// One named network namespace, deleted on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
    addr: Ipv4Addr,
    /// An fd of the namespace (from its `/run/netns` name), for `setns`.
    file: File,
}

impl Namespace {
    /// Creates a namespace `name` (which must not exist) with its loopback up. `addr` is only
    /// remembered here; [`Namespace::configure_tun`] assigns it.
    pub fn create(name: String, addr: Ipv4Addr) -> anyhow::Result<Self> {
        ip(&["netns", "add", &name])?;
        let path = Path::new(NETNS_DIR).join(&name);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(err) => {
                let _ = ip(&["netns", "del", &name]);
                return Err(err).with_context(|| format!("opening {}", path.display()));
            }
        };
        let ns = Self { name, addr, file };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A fresh, unused name stem for a pair of namespaces of this process,
    /// `udtlab-<pid>-<n>`; append `-a`, `-b`.
    pub fn unique_stem() -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("{NAME_PREFIX}{}-{n}", std::process::id())
    }

    /// The namespace's name, as `ip netns` lists it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address of the namespace's end of the link.
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// Runs `f` on a helper thread that has entered the namespace, and returns its result.
    /// Sockets and TUN fds opened by `f` belong to the namespace for their whole life, and
    /// can be used from any thread afterwards.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> io::Result<R> {
        let fd = self.file.as_raw_fd();
        std::thread::scope(|s| {
            s.spawn(|| {
                enter(fd)?;
                Ok(f())
            })
            .join()
            .map_err(|_| io::Error::other("thread in namespace panicked"))?
        })
    }

    /// Packets the device `dev` in this namespace dropped on transmit, from the namespace's
    /// `/proc/net/dev`. For a lab's TUN device these are packets its reader (the forwarder)
    /// had not taken when its queue filled: losses before the link model sees them.
    pub fn tx_dropped(&self, dev: &str) -> anyhow::Result<u64> {
        // `/proc/self/net` follows the thread group's namespace, `thread-self` this thread's.
        let table = self
            .run(|| std::fs::read_to_string("/proc/thread-self/net/dev"))
            .and_then(|r| r)
            .with_context(|| format!("reading /proc/net/dev in {}", self.name))?;
        tx_dropped_in(&table, dev)
            .with_context(|| format!("no device {dev} in /proc/net/dev of {}", self.name))
    }

    /// A command that will run inside the namespace, and die with the lab process.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        let fd = self.file.as_raw_fd();
        // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
        // system calls (setns, prctl, getppid); `fd` stays open as long as `self`, which the
        // caller holds while spawning.
        unsafe {
            cmd.pre_exec(move || {
                enter(fd)?;
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd
    }

    /// Brings up the TUN device `dev` (already created inside the namespace) with this
    /// namespace's address as `/prefix_len`, MTU `mtu`, and no IPv6 link-local address (so no
    /// router solicitations cross the link uninvited).
    pub fn configure_tun(&self, dev: &str, prefix_len: u8, mtu: u32) -> anyhow::Result<()> {
        let cidr = format!("{}/{prefix_len}", self.addr);
        self.ip(&["link", "set", dev, "addrgenmode", "none"])?;
        self.ip(&["addr", "add", &cidr, "dev", dev])?;
        // A long device queue gives the forwarder slack against bursts: drops there would be
        // losses the link model does not know about.
        self.ip(&[
            "link",
            "set",
            dev,
            "mtu",
            &mtu.to_string(),
            "txqueuelen",
            "10000",
            "up",
        ])
    }

    fn ip(&self, args: &[&str]) -> anyhow::Result<()> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        kill_processes_in(&self.name);
        if let Err(err) = ip(&["netns", "del", &self.name]) {
            eprintln!("udt lab: could not delete namespace {}: {err:#}", self.name);
        }
    }
}

/// Deletes the namespaces left by labs whose process is gone (killed with `SIGKILL`, or a
/// crash), and kills what still runs in them. Returns how many were removed.
pub fn clean_leftovers() -> usize {
    let Ok(entries) = std::fs::read_dir(NETNS_DIR) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        kill_processes_in(&name);
        if ip(&["netns", "del", &name]).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in a lab namespace name `udtlab-<pid>-...`.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(NAME_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// Sends `SIGKILL` to every process inside namespace `name`. Used only on teardown, when
/// they have had their chance to exit.
fn kill_processes_in(name: &str) {
    let Ok(out) = Command::new("ip")
        .args(["netns", "pids", name])
        .stderr(Stdio::null())
        .output()
    else {
        return;
    };
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if let Ok(pid) = pid.parse::<libc::pid_t>() {
            // SAFETY: kill has no memory effects; a stale pid is the only risk, and these
            // were just listed as living in our namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Moves the calling thread into the network namespace of `fd`.
fn enter(fd: RawFd) -> io::Result<()> {
    // SAFETY: setns only reads its integer arguments.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The transmit drops of `dev` in a `/proc/net/dev` table: after the `name:`, eight receive
/// counters, then transmit bytes, packets, errors and drops.
fn tx_dropped_in(table: &str, dev: &str) -> Option<u64> {
    table.lines().find_map(|line| {
        let (name, counters) = line.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        counters.split_whitespace().nth(11)?.parse().ok()
    })
}

/// Runs `ip ARGS...`, turning a failure into an error with its stderr.
fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("running `ip` (install iproute2)")?;
    if !out.status.success() {
        bail!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmit_drops_are_read_from_the_device_line() {
        let table = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
udtlab0:  184294    2905    0    7    0     0          0         0 457653796  306803    0 4525    0     0       0          0
";
        assert_eq!(tx_dropped_in(table, "udtlab0"), Some(4525));
        assert_eq!(tx_dropped_in(table, "lo"), Some(0));
        assert_eq!(tx_dropped_in(table, "udtlab"), None);
        assert_eq!(tx_dropped_in("udtlab0: 1 2 3", "udtlab0"), None);
    }

    #[test]
    fn owner_pid_from_name() {
        assert_eq!(owner_pid("udtlab-1234-0-a"), Some(1234));
        assert_eq!(owner_pid("udtlab-x-0-a"), None);
        assert_eq!(owner_pid("other-1234"), None);
        let stem = Namespace::unique_stem();
        assert_eq!(owner_pid(&stem), Some(std::process::id()));
        assert_ne!(stem, Namespace::unique_stem());
    }
}
