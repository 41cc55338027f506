//! `udt lab link`: run a command pair across an emulated link, and clean up on every exit path.
//!
//! **Shape:** the main command (`-- CMD...`) runs in namespace b, in the foreground with the
//! terminal; its exit status is the lab's. An optional side command (`--a 'CMD'`, a shell
//! string) runs in namespace a in the background, started first, typically a server; it is
//! stopped when the main command ends. With no main command, an interactive `$SHELL` runs in
//! b. Both see the environment variables of [`ENV_VARS`]: the two addresses and the namespace
//! names (for `ip netns exec $UDT_LAB_NS_A ...` from another terminal).
//!
//! **Signals:** `SIGINT`, `SIGTERM` and `SIGHUP` only bump a counter (`signal-hook`), which the
//! waiting loop turns into `SIGTERM` to the children, then `SIGKILL` after a grace period or a
//! second signal. The lab itself then unwinds normally, so [`Lab`]'s drop deletes the
//! namespaces. `signal-hook` rather than `ctrlc`: it registers and unregisters per run (a
//! process may run several labs; `ctrlc` allows one handler per process), needs no handler
//! thread, and counts repeated signals (a second Ctrl-C escalates to `SIGKILL`).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::params::LinkParams;
use crate::{Lab, Namespace};

/// The environment variables given to both commands.
pub const ENV_VARS: [&str; 4] = ["UDT_LAB_A", "UDT_LAB_B", "UDT_LAB_NS_A", "UDT_LAB_NS_B"];

/// How long children get between `SIGTERM` and `SIGKILL`.
const GRACE: Duration = Duration::from_secs(2);

/// How often the waiting loop looks at the children and the signal flag.
const POLL: Duration = Duration::from_millis(20);

/// What `udt lab link` runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkCommands {
    /// Shell command for namespace a (background), if any.
    pub a: Option<String>,
    /// Program and arguments for namespace b (foreground); empty = an interactive shell.
    pub b: Vec<OsString>,
}

/// Starts a lab with `params`, prints its parameters and addresses to stderr, runs
/// `commands`, and tears everything down. Returns the main command's exit status.
pub fn run_link(params: LinkParams, commands: &LinkCommands) -> anyhow::Result<ExitStatus> {
    let signals = Arc::new(AtomicUsize::new(0));
    let ids = [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ]
    .map(|sig| {
        let counter = Arc::clone(&signals);
        // SAFETY: the action only increments an atomic, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                counter.fetch_add(1, Ordering::SeqCst);
            })
        }
    });
    let result = run_registered(params, commands, &signals);
    for id in ids.into_iter().flatten() {
        signal_hook::low_level::unregister(id);
    }
    result
}

fn run_registered(
    params: LinkParams,
    commands: &LinkCommands,
    signals: &AtomicUsize,
) -> anyhow::Result<ExitStatus> {
    let lab = Lab::start(params)?;
    eprintln!("udt lab: link {}", lab.params());
    eprintln!(
        "udt lab: a = {} (netns {}), b = {} (netns {})",
        lab.a().addr(),
        lab.a().name(),
        lab.b().addr(),
        lab.b().name()
    );
    let mut side = match &commands.a {
        Some(cmd) => Some(spawn_side(&lab, cmd)?),
        None => None,
    };
    let mut main = spawn_main(&lab, &commands.b)?;
    let status = wait_or_signal(&mut main, signals);
    if let Some(child) = side.as_mut() {
        terminate(child, signals);
    }
    let status = status?;
    report_losses(&lab);
    if signals.load(Ordering::Relaxed) > 0 {
        eprintln!("udt lab: interrupted; cleaned up");
    }
    Ok(status)
}

/// What each direction lost, at the link (by cause) and at its intake (the TUN queue in
/// front of the forwarder), so that a user comparing a sender's retransmissions with the
/// path's losses has both.
fn report_losses(lab: &Lab) {
    // The forwarder publishes its counters every 10 ms.
    std::thread::sleep(Duration::from_millis(20));
    let intake = lab.intake_drops().map_err(|e| format!("{e:#}"));
    for (i, (dir, stats)) in ["a->b", "b->a"].iter().zip(lab.stats()).enumerate() {
        let link = &stats.link;
        let intake = match &intake {
            Ok(drops) => drops[i].to_string(),
            Err(e) => format!("? ({e})"),
        };
        eprintln!(
            "udt lab: {dir}: {} packets delivered; lost {} at the link ({} random, {} queue \
             full), {intake} at the intake",
            link.delivered,
            link.dropped(),
            link.dropped_loss,
            link.dropped_queue,
        );
    }
}

fn spawn_side(lab: &Lab, cmd: &str) -> anyhow::Result<Child> {
    let mut command = lab.a().command("/bin/sh");
    command.arg("-c").arg(cmd).envs(env(lab));
    command
        .spawn()
        .with_context(|| format!("starting `{cmd}` in {}", lab.a().name()))
}

fn spawn_main(lab: &Lab, argv: &[OsString]) -> anyhow::Result<Child> {
    let shell = std::env::var_os("SHELL").unwrap_or_else(|| "/bin/sh".into());
    let (program, args) = match argv.split_first() {
        Some((program, args)) => (program.clone(), args),
        None => {
            eprintln!("udt lab: interactive shell in b; `exit` ends the lab");
            (shell, &[][..])
        }
    };
    lab.b()
        .command(&program)
        .args(args)
        .envs(env(lab))
        .spawn()
        .with_context(|| format!("starting {program:?} in {}", lab.b().name()))
}

fn env(lab: &Lab) -> [(&'static str, String); 4] {
    let [a, b, ns_a, ns_b] = ENV_VARS;
    let name = |ns: &Namespace| ns.name().to_owned();
    [
        (a, lab.a().addr().to_string()),
        (b, lab.b().addr().to_string()),
        (ns_a, name(lab.a())),
        (ns_b, name(lab.b())),
    ]
}

/// Waits for `child`; on a signal, terminates it (and returns its status).
fn wait_or_signal(child: &mut Child, signals: &AtomicUsize) -> anyhow::Result<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if signals.load(Ordering::Relaxed) > 0 {
            return Ok(terminate(child, signals));
        }
        std::thread::sleep(POLL);
    }
}

/// `SIGTERM`, then `SIGKILL` after [`GRACE`] or at a further signal; reaps the child.
fn terminate(child: &mut Child, signals: &AtomicUsize) -> ExitStatus {
    let seen = signals.load(Ordering::Relaxed);
    if let Ok(Some(status)) = child.try_wait() {
        return status;
    }
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill has no memory effects; the child is not reaped yet, so the pid is ours.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) if start.elapsed() < GRACE && signals.load(Ordering::Relaxed) == seen => {
                std::thread::sleep(POLL);
            }
            _ => {
                let _ = child.kill();
                return child
                    .wait()
                    .unwrap_or_else(|_| ExitStatus::from_raw(libc::SIGKILL));
            }
        }
    }
}
