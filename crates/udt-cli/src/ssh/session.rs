//! The `ssh` child: its command line, the ready line on its stdout, what its stderr said, and
//! a clear one-line error when the remote side never got ready.
//!
//! ssh's stderr is captured (its last lines kept) rather than shown: prompts for passwords,
//! passphrases and host keys go to the terminal itself, and a failure is told in one line
//! that quotes the line that matters. Its stdout is read for the ready line, then drained so
//! that ssh never blocks or dies writing to us.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use zeroize::Zeroizing;

use super::ready::{Ready, ReadyError, PREFIX};
use super::{SshArgs, SERVER_SUBCOMMAND};
use crate::UsageError;

/// Options scp gives ssh too: no X11 or agent forwarding, no local command, no port
/// forwardings, no remote command or terminal from a configuration file, and no control
/// master left behind. ssh takes the first value it sees, so the user's `-o` cannot undo them.
const FIXED_OPTIONS: [&str; 7] = [
    "-x",
    "-oForwardAgent=no",
    "-oPermitLocalCommand=no",
    "-oClearAllForwardings=yes",
    "-oRemoteCommand=none",
    "-oRequestTTY=no",
    "-oControlMaster=no",
];

/// Longest line read while looking for the ready line (a 4 KiB path in hex, and the rest).
const MAX_LINE_BYTES: usize = 16 << 10;

/// Output tolerated before the ready line (a login script's chatter).
const MAX_CHATTER_BYTES: usize = 64 << 10;

/// stderr lines kept, and their length.
const TAIL_LINES: usize = 8;
const TAIL_LINE_CHARS: usize = 300;

/// How long ssh may take to exit once its stdin is closed.
const EXIT_WAIT: Duration = Duration::from_secs(10);

/// The command the remote shell runs: `--remote-udt` as typed (like rsync's
/// `--rsync-path`, so `~/bin/udt` or `sudo -u x udt` work), then fixed words: the controller
/// and the rate cap (`maxbw` bytes per second, passed on as bits per second) it sends with.
pub fn remote_command(args: &SshArgs, cc: &str, maxbw: Option<u64>) -> String {
    let mut command = format!("{} {SERVER_SUBCOMMAND} --cc {cc}", args.remote_udt);
    if let Some(bytes_per_sec) = maxbw {
        command.push_str(&format!(" --maxbw {}", bytes_per_sec.saturating_mul(8)));
    }
    if let Some(range) = args.port_range {
        command.push_str(&format!(" --port-range {range}"));
    }
    command
}

/// ssh's command line: `--ssh`'s words, scp's fixed options, the user's options, `--`, the
/// destination and the remote command.
pub fn ssh_argv(
    args: &SshArgs,
    port: Option<u16>,
    destination: &str,
    remote_command: &str,
) -> Result<Vec<OsString>, UsageError> {
    let words = shlex::split(&args.ssh_command)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| UsageError("--ssh: an empty command or unbalanced quotes".into()))?;
    let mut argv: Vec<OsString> = words.into_iter().map(OsString::from).collect();
    argv.extend(FIXED_OPTIONS.iter().map(OsString::from));
    if let Some(port) = port {
        argv.extend(["-p".into(), port.to_string().into()]);
    }
    if let Some(identity) = &args.identity {
        argv.extend(["-i".into(), identity.into()]);
    }
    if let Some(config) = &args.ssh_config {
        argv.extend(["-F".into(), config.into()]);
    }
    for option in &args.ssh_option {
        argv.extend(["-o".into(), option.into()]);
    }
    argv.extend(["--".into(), destination.into(), remote_command.into()]);
    Ok(argv)
}

/// A running `ssh` with `udt __ssh-server` at the other end. Dropping it closes ssh's stdin
/// (the remote side exits), waits a moment for ssh, and kills it if it lingers.
#[derive(Debug)]
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Session {
    /// Run ssh with `argv` and wait for the ready line. `destination` and `remote_udt` are
    /// for messages.
    pub fn start(
        argv: &[OsString],
        destination: &str,
        remote_udt: &str,
    ) -> anyhow::Result<(Self, Ready)> {
        let (program, rest) = argv.split_first().context("--ssh: no command")?;
        let mut child = Command::new(program)
            .args(rest)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("running {}", program.to_string_lossy()))?;
        let tail = StderrTail::collect(child.stderr.take());
        let stdin = child.stdin.take();
        let mut session = Self { child, stdin };
        let mut stdout = BufReader::new(session.child.stdout.take().context("ssh's stdout")?);
        match read_ready(&mut stdout) {
            Ok(Some(ready)) => {
                thread::spawn(move || io::copy(&mut stdout, &mut io::sink()));
                Ok((session, ready?))
            }
            Ok(None) => {
                let status = session.wait_exit();
                let lines = tail.lines();
                Err(anyhow::anyhow!(explain(
                    status,
                    &lines,
                    destination,
                    remote_udt
                )))
            }
            Err(e) => Err(e).context("reading from ssh"),
        }
    }

    /// ssh's exit status once it has exited (killed after [`EXIT_WAIT`]).
    fn wait_exit(&mut self) -> Option<ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_WAIT;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.wait_exit();
    }
}

/// Skip chatter up to the ready line; `None` at the end of the output.
fn read_ready(out: &mut impl BufRead) -> io::Result<Option<Result<Ready, ReadyError>>> {
    let mut seen = 0;
    while seen < MAX_CHATTER_BYTES {
        // Room for the longest line up front: no reallocation leaves a copy of the key.
        let mut line = Zeroizing::new(Vec::with_capacity(MAX_LINE_BYTES + 1));
        let n = out
            .by_ref()
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        if line.starts_with(PREFIX.as_bytes()) {
            let parsed = std::str::from_utf8(&line)
                .map_err(|_| ReadyError::Field("utf-8"))
                .and_then(Ready::parse);
            return Ok(Some(parsed));
        }
        seen += n;
    }
    Ok(Some(Err(ReadyError::Field("prefix"))))
}

/// The one line that says why the remote side never got ready.
fn explain(
    status: Option<ExitStatus>,
    tail: &[String],
    destination: &str,
    remote_udt: &str,
) -> String {
    let last = tail.last().map_or("", String::as_str);
    let said = |prefix: &str| {
        if last.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}: {last}")
        }
    };
    let code = status.and_then(|s| s.code());
    if tail.iter().any(|l| l.contains("unrecognized subcommand")) {
        return format!(
            "{destination}: the udt there is too old for SSH transfers: update it, or name a \
             newer one with --remote-udt PATH"
        );
    }
    match code {
        Some(127) => format!(
            "{destination}: {remote_udt}: not found there: install udt on that host (on the \
             PATH of non-interactive ssh sessions) or give its path with --remote-udt PATH"
        ),
        Some(126) => format!(
            "{destination}: {remote_udt} cannot be run there (not executable, or built for \
             another system): check it, or name another with --remote-udt PATH"
        ),
        Some(255) => said(&format!("ssh {destination} failed")),
        Some(code) => said(&format!(
            "{destination}: the remote udt did not start (exit status {code})"
        )),
        None => said(&format!(
            "{destination}: ssh ended without starting the remote udt (killed)"
        )),
    }
}

/// The last lines of ssh's stderr, made safe to print.
#[derive(Debug)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    done: mpsc::Receiver<()>,
}

impl StderrTail {
    fn collect(stderr: Option<impl Read + Send + 'static>) -> Self {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = mpsc::channel();
        if let Some(stderr) = stderr {
            let sink = Arc::clone(&lines);
            thread::spawn(move || {
                for line in BufReader::new(stderr).split(b'\n').map_while(Result::ok) {
                    let line = printable(&line);
                    if line.is_empty() {
                        continue;
                    }
                    let mut lines = sink.lock().unwrap_or_else(|e| e.into_inner());
                    if lines.len() == TAIL_LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
                let _ = tx.send(());
            });
        }
        Self { lines, done: rx }
    }

    /// The lines so far, after giving the reader a moment to reach the end.
    fn lines(&self) -> Vec<String> {
        let _ = self.done.recv_timeout(Duration::from_secs(1));
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect()
    }
}

/// A line from the remote side as printable text: control characters become `?`, and it is
/// cut to [`TAIL_LINE_CHARS`].
fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end()
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .take(TAIL_LINE_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn ssh_args(command: &str) -> SshArgs {
        SshArgs {
            identity: Some("id".into()),
            ssh_option: vec!["Port=2222".into()],
            ssh_config: None,
            ssh_command: command.into(),
            remote_udt: "~/bin/udt".into(),
            port_range: Some("60000-60010".parse().unwrap()),
        }
    }

    #[test]
    fn the_command_line_follows_scp() {
        let args = ssh_args("ssh -F 'my cfg'");
        let remote = remote_command(&args, "model", None);
        assert_eq!(
            remote,
            "~/bin/udt __ssh-server --cc model --port-range 60000-60010"
        );
        // A cap travels as bits per second, which the remote reads back as the same rate.
        let capped = remote_command(&args, "ledbat", Some(12_500_000));
        assert_eq!(
            capped,
            "~/bin/udt __ssh-server --cc ledbat --maxbw 100000000 --port-range 60000-60010"
        );
        let rate = crate::cmd::cp::parse_maxbw(Some("100000000")).unwrap();
        assert_eq!(rate, Some(12_500_000));
        let argv = ssh_argv(&args, Some(22), "me@host", &remote).unwrap();
        let argv: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into()).collect();
        let head = ["ssh", "-F", "my cfg", "-x", "-oForwardAgent=no"];
        assert_eq!(argv[..5], head);
        let tail = [
            "-p",
            "22",
            "-i",
            "id",
            "-o",
            "Port=2222",
            "--",
            "me@host",
            &remote,
        ];
        assert_eq!(argv[argv.len() - 9..], tail);
        assert!(ssh_argv(&ssh_args("ssh 'x"), None, "h", "c").is_err());
        assert!(ssh_argv(&ssh_args("  "), None, "h", "c").is_err());
    }

    #[test]
    fn chatter_before_the_ready_line_is_skipped() {
        let ready = Ready {
            port: 5,
            addr: None,
            cwd: b"/".to_vec(),
            key: udt::SessionKey::from_bytes([1; 32]),
        };
        let text = format!("Welcome!\n\x1b[1mmotd\n{}", ready.to_line().as_str());
        let got = read_ready(&mut text.as_bytes()).unwrap().unwrap().unwrap();
        assert_eq!(got.port, 5);
        assert!(read_ready(&mut &b"just chatter\n"[..]).unwrap().is_none());
        let flood = vec![b'x'; MAX_CHATTER_BYTES + MAX_LINE_BYTES + 10];
        assert!(read_ready(&mut &flood[..]).unwrap().unwrap().is_err());
    }

    #[test]
    fn failures_are_explained_in_one_line() {
        let exit = |code: i32| Some(ExitStatus::from_raw(code << 8));
        let tail = |s: &str| vec![s.to_string()];
        let missing = explain(exit(127), &tail("bash: udt: command not found"), "h", "udt");
        assert!(
            missing.starts_with("h: udt: not found there: install udt"),
            "{missing}"
        );
        assert!(missing.contains("--remote-udt PATH"));
        let denied = explain(
            exit(255),
            &tail("me@h: Permission denied (publickey)."),
            "me@h",
            "udt",
        );
        assert_eq!(
            denied,
            "ssh me@h failed: me@h: Permission denied (publickey)."
        );
        let old = explain(
            exit(2),
            &tail("error: unrecognized subcommand '__ssh-server'"),
            "h",
            "udt",
        );
        assert!(old.contains("too old"), "{old}");
        let busy = explain(
            exit(1),
            &tail("udt: listening: every UDP port in 1-2 is in use"),
            "h",
            "udt",
        );
        assert!(busy.ends_with("(exit status 1): udt: listening: every UDP port in 1-2 is in use"));
        for line in [
            explain(exit(126), &[], "h", "u"),
            explain(None, &[], "h", "u"),
        ] {
            assert!(!line.contains('\n'), "{line}");
        }
        assert_eq!(printable(b"a\x1b[31mb\r\n"), "a?[31mb");
    }
}
