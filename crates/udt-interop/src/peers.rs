//! Building and running the libudt 4.11 peers of `interop/` (`udt_server`, `udt_client`).
//!
//! The C++ programs are built by running `make -C interop` once per test process
//! ([`binaries`], behind a `OnceLock`), not from a `build.rs`: a build script would run on
//! every `cargo build` of the workspace and break builds on machines without libudt, while
//! the tests can fail with a message that names the fix (`scripts/setup.sh`). `make` is
//! incremental, so the second and later test runs cost nothing.
//!
//! A running peer is a [`PeerProcess`]: its stdout JSON lines arrive on a channel, it is
//! killed when dropped, and [`Json`] reads fields out of a line without a JSON dependency.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where the peers are built: `$INTEROP_OUT`, else `interop/` next to the test binary's
/// `debug`/`release` directory (`<target>/interop`).
fn out_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("INTEROP_OUT") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    // <target>/<profile>/deps/<test binary>
    let target = exe.ancestors().nth(3).unwrap_or(Path::new("target"));
    target.join("interop")
}

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// The directory holding `udt_server` and `udt_client`, built on first use.
///
/// # Panics
/// If the build fails, with a message naming `scripts/setup.sh`.
pub fn binaries() -> &'static Path {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let out = out_dir();
        let result = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(source_dir())
            .arg(format!("INTEROP_OUT={}", out.display()))
            .output();
        match result {
            Ok(o) if o.status.success() => Ok(out),
            Ok(o) => Err(format!(
                "make exited with {}:\n{}{}",
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => Err(format!("could not run make: {e}")),
        }
    });
    match built {
        Ok(dir) => dir,
        Err(why) => panic!(
            "building the libudt 4.11 interop peers failed; they need g++ and libudt-dev: \
             run scripts/setup.sh\n{why}"
        ),
    }
}

/// One running C++ peer.
#[derive(Debug)]
pub struct PeerProcess {
    child: Child,
    lines: Receiver<String>,
    name: String,
}

impl PeerProcess {
    /// Start `program` (`"udt_server"` or `"udt_client"`) with `args`.
    ///
    /// # Panics
    /// If the peers cannot be built or started.
    pub fn spawn(program: &str, args: &[String]) -> Self {
        Self::spawn_with_env(program, args, &[])
    }

    /// [`Self::spawn`] with extra environment variables, e.g. `LD_LIBRARY_PATH` to run the
    /// peer, built against Debian's libudt, on another `libudt.so.0` (udt-libudt's).
    ///
    /// # Panics
    /// If the peers cannot be built or started.
    pub fn spawn_with_env(program: &str, args: &[String], env: &[(&str, &Path)]) -> Self {
        let path = binaries().join(program);
        let mut child = Command::new(&path)
            .args(args)
            .envs(env.iter().map(|&(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", path.display()));
        // Cannot fail: stdout was set to `Stdio::piped()` above and is taken once.
        let stdout = child.stdout.take().expect("stdout was piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            name: format!("{program} {}", args.join(" ")),
        }
    }

    /// The next stdout line whose `"event"` is `event`, waiting at most `timeout`.
    ///
    /// # Panics
    /// If none comes in time or the process ends first.
    pub fn expect_event(&mut self, event: &str, timeout: Duration) -> Json {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let json = Json(line);
                    if json.str("event") == Some(event) {
                        return json;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{}: no {event:?} line within {timeout:?}", self.name)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    panic!("{}: exited ({status:?}) before a {event:?} line", self.name)
                }
            }
        }
    }

    /// The `{"event":"result",...}` line.
    pub fn result(&mut self, timeout: Duration) -> Json {
        self.expect_event("result", timeout)
    }

    /// The OS process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Kill the process at once (SIGKILL: no UDT Shutdown is sent).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One flat JSON object line as printed by the peers; fields are looked up by name.
#[derive(Debug, Clone)]
pub struct Json(pub String);

/// How many times a transfer to a libudt in-order message receiver is tried while libudt
/// loses a message it acknowledged ([`Json::is_libudt_message_skip`], 1 run in 100-200): a
/// real failure of ours still fails at once, and three skips in a row (~1e-6) would be news.
pub const LIBUDT_SKIP_ATTEMPTS: u32 = 3;

impl Json {
    /// The raw text of field `key`'s value (strings keep their quotes).
    fn raw(&self, key: &str) -> Option<&str> {
        let pat = format!("\"{key}\":");
        let start = self.0.find(&pat)? + pat.len();
        let rest = &self.0[start..];
        let end = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.find('"')? + 2
        } else {
            rest.find([',', '}']).unwrap_or(rest.len())
        };
        Some(&rest[..end])
    }

    /// A string field.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.raw(key)?.strip_prefix('"')?.strip_suffix('"')
    }

    /// An integer field.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.raw(key)?.parse().ok()
    }

    /// A number field.
    pub fn num(&self, key: &str) -> Option<f64> {
        self.raw(key)?.parse().ok()
    }

    /// A boolean field.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.raw(key)?.parse().ok()
    }

    /// Whether this in-order message receiver's result (`udt_server --mode dgram`) shows
    /// libudt 4.11's own message loss and nothing else: every message it returned was whole
    /// and correct and none came twice or backwards, but it jumped over some, exactly as many
    /// as it is short of `msgs`.
    ///
    /// 4.11's receive buffer does that in one run in 100-200 on loopback, libudt to libudt
    /// as well (most likely `CRcvBuffer::scanMsg` racing the receiving thread's ACK point): the
    /// skipped message was acknowledged, so the sender never resends it. Tests whose sender
    /// is ours retry a transfer that failed this way; any other failure is ours to explain.
    pub fn is_libudt_message_skip(&self, msgs: u64) -> bool {
        let Ok(msgs) = i64::try_from(msgs) else {
            return false;
        };
        let (Some(got), Some(skipped)) = (self.int("msgs"), self.int("skipped")) else {
            return false;
        };
        self.int("bad_offset") == Some(-1)
            && self.int("backwards") == Some(0)
            && skipped > 0
            && got + skipped == msgs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libudt_message_skip_is_told_from_other_failures() {
        let r = |s: &str| Json(format!(r#"{{"event":"result",{s}}}"#));
        let skip = r(r#""msgs":499,"bad_offset":-1,"skipped":1,"backwards":0"#);
        assert!(skip.is_libudt_message_skip(500));
        assert!(
            !skip.is_libudt_message_skip(501),
            "one short but another missing too"
        );
        let corrupt = r(r#""msgs":499,"bad_offset":7,"skipped":1,"backwards":0"#);
        assert!(!corrupt.is_libudt_message_skip(500));
        let reordered = r(r#""msgs":499,"bad_offset":-1,"skipped":1,"backwards":1"#);
        assert!(!reordered.is_libudt_message_skip(500));
        let complete = r(r#""msgs":500,"bad_offset":-1,"skipped":0,"backwards":0"#);
        assert!(!complete.is_libudt_message_skip(500));
        let old_peer = r(r#""msgs":499,"bad_offset":-1"#);
        assert!(!old_peer.is_libudt_message_skip(500));
    }

    #[test]
    fn json_fields() {
        let j =
            Json(r#"{"event":"result","ok":true,"bytes":42,"mbps":1.5,"end":"2001 x, y"}"#.into());
        assert_eq!(j.str("event"), Some("result"));
        assert_eq!(j.bool("ok"), Some(true));
        assert_eq!(j.int("bytes"), Some(42));
        assert_eq!(j.num("mbps"), Some(1.5));
        assert_eq!(j.str("end"), Some("2001 x, y"));
        assert_eq!(j.int("missing"), None);
    }
}
