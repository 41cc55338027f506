//! `udt cp` with a `[user@]host:path` operand: start the remote side over ssh, connect with
//! the key it sent, and run the usual upload or download (`transfer::session`).

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::Context;
use udt::UdtStream;

use super::paths::under_root;
use super::ready::Ready;
use super::session::{remote_command, ssh_argv, Session};
use crate::cmd::cp::{transfer_options, Args, Operand, SshOperand};
use crate::copy::{finish, local_manifest};
use crate::transfer::paths::RelPath;
use crate::transfer::receiver::ReceiveOptions;
use crate::transfer::session::{download, upload};
use crate::transfer::{Observer, Summary};
use crate::UsageError;

/// Copy local `srcs` to an SSH `dst`, or SSH `srcs` (all on one host) to a local `dst`.
pub fn copy(
    args: &Args,
    srcs: &[Operand],
    dst: &Operand,
    opts: ReceiveOptions,
    obs: &dyn Observer,
) -> anyhow::Result<Summary> {
    let mixed = || {
        anyhow::Error::from(UsageError(
            "copy either local sources to host:dst or host:sources to a local dst".into(),
        ))
    };
    match dst {
        Operand::Ssh(target) => {
            if !srcs.iter().all(|s| matches!(s, Operand::Local(_))) {
                return Err(mixed());
            }
            let manifest = local_manifest(srcs, args.recursive)?;
            let (_session, ready) = start(args, target)?;
            let dest = under_root(&target.path, &ready.cwd)?;
            let stream = connect(&ready, target, args)?;
            finish(stream, |s| upload(s, &manifest, dest, opts, obs))
        }
        Operand::Local(dest) => {
            let mut targets = srcs.iter().map(|s| match s {
                Operand::Ssh(t) => Ok(t),
                _ => Err(mixed()),
            });
            let first = targets.next().ok_or_else(mixed)??;
            for other in targets {
                if other?.destination != first.destination {
                    return Err(
                        UsageError("all remote sources must be on the same host".into()).into(),
                    );
                }
            }
            let (_session, ready) = start(args, first)?;
            let paths = srcs
                .iter()
                .map(|s| match s {
                    Operand::Ssh(t) => source_path(&t.path, &ready.cwd),
                    _ => Err(mixed()),
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let stream = connect(&ready, first, args)?;
            finish(stream, |s| {
                download(s, paths, args.recursive, dest, opts, obs)
            })
        }
        Operand::Remote { .. } => Err(mixed()),
    }
}

/// Log in and start the remote side.
fn start(args: &Args, target: &SshOperand) -> anyhow::Result<(Session, Ready)> {
    let command = remote_command(&args.ssh, args.controller()?, args.max_bandwidth()?);
    let argv = ssh_argv(&args.ssh, args.port, &target.destination, &command)?;
    Session::start(&argv, &target.destination, &args.ssh.remote_udt)
}

/// A source path on the remote host (not `/` itself: a copy needs a name).
fn source_path(typed: &[u8], cwd: &[u8]) -> anyhow::Result<RelPath> {
    under_root(typed, cwd)?.ok_or_else(|| {
        UsageError(format!(
            "{}: name a file or directory below /",
            String::from_utf8_lossy(typed)
        ))
        .into()
    })
}

/// Connect with the session key: to the address the SSH connection reached, and if that
/// fails (it is private behind NAT, or was reached through a jump host), to the host name.
fn connect(ready: &Ready, target: &SshOperand, args: &Args) -> anyhow::Result<UdtStream> {
    let mut options = transfer_options(args.controller()?, args.max_bandwidth()?)?;
    options.set_session_key(Some(ready.key.clone()));
    let port = ready.port;
    let by_name = || {
        (target.host.as_str(), port)
            .to_socket_addrs()
            .map(Iterator::collect::<Vec<SocketAddr>>)
    };
    let Some(ip) = ready.addr else {
        return UdtStream::connect_with((target.host.as_str(), port), options)
            .with_context(|| format!("connecting to {} port {port}", target.host));
    };
    let reached = SocketAddr::new(ip, port);
    let first = match UdtStream::connect_with(reached, options.clone()) {
        Ok(stream) => return Ok(stream),
        Err(e) => e,
    };
    match by_name() {
        Ok(addrs) if !addrs.is_empty() && !addrs.contains(&reached) => {
            UdtStream::connect_with(&addrs[..], options).with_context(|| {
                format!(
                    "connecting to {reached} (where ssh reached {}): {first}; and to {} port \
                     {port}",
                    target.destination, target.host
                )
            })
        }
        _ => Err(first).with_context(|| {
            format!(
                "connecting to {reached} (where ssh reached {})",
                target.destination
            )
        }),
    }
}
