//! The two ends of a connection: the client's [`download`] and [`upload`], and the server's
//! [`serve_connection`], which also answers classic UDT4 `recvfile` clients.

use std::io::Read;
use std::path::Path;

use udt::UdtStream;

use super::error::{ErrorCode, Result, TransferError};
use super::legacy::{self, LegacyServed};
use super::manifest::Manifest;
use super::paths::{RelPath, Root};
use super::protocol::{is_magic, Frame, MAGIC, VERSION};
use super::receiver::{self, Accept, ReceiveOptions, Replace};
use super::watchdog::Watchdog;
use super::{sender, unexpected, Link, Observer, Quiet, Summary};

/// Open the conversation: magic, version agreement.
fn client_hello(stream: &UdtStream) -> Result<Link<'_>> {
    let mut link = Link::new(stream);
    link.writer.preface(&MAGIC);
    link.send(&Frame::Hello { version: VERSION })?;
    link.push()?;
    match link.reader.next_frame()? {
        Frame::Hello { version } if version >= 1 => Ok(link),
        Frame::Hello { version } => Err(TransferError::new(
            ErrorCode::Unsupported,
            format!("the server speaks protocol version {version}, we need 1"),
        )),
        other => Err(unexpected(other, "in the greeting")),
    }
}

/// Fetch `paths` (relative to the server's root) into `dest`.
pub fn download(
    stream: &UdtStream,
    paths: Vec<RelPath>,
    recursive: bool,
    dest: &Path,
    opts: ReceiveOptions,
    obs: &dyn Observer,
) -> Result<Summary> {
    let mut link = client_hello(stream)?;
    let accept = Accept::requested(&paths, recursive);
    link.send(&Frame::Get { recursive, paths })?;
    link.push()?;
    receiver::receive(&mut link, dest, opts, &accept, obs)
}

/// Send `manifest` to `dest` (relative to the server's root; `None`: the root itself).
pub fn upload(
    stream: &UdtStream,
    manifest: &Manifest,
    dest: Option<RelPath>,
    opts: ReceiveOptions,
    obs: &dyn Observer,
) -> Result<Summary> {
    let mut link = client_hello(stream)?;
    let put = Frame::Put {
        dest,
        force: opts.replace == Replace::Allowed,
        resume: opts.resume,
    };
    if let Err(e) = link.send(&put).and_then(|()| link.push()) {
        return Err(link.peer_error_or(e));
    }
    sender::send(&mut link, manifest, obs)
}

/// What the server did for one connection.
#[derive(Debug)]
pub enum Served {
    /// A download: files sent.
    Sent(Summary),
    /// An upload: files received.
    Received(Summary),
    /// A classic UDT4 `recvfile` client.
    Legacy(LegacyServed),
}

/// What a server allows its clients (`udt serve`'s flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Refuse every upload.
    pub read_only: bool,
    /// Replace existing files when a client asks (`--force`).
    pub allow_overwrite: bool,
    /// Refuse files larger than this.
    pub max_file_size: Option<u64>,
}

/// Serve one accepted connection under `root` as `policy` allows, in whichever protocol its
/// first 4 bytes announce (see [`super::protocol`]). Classic clients can only download.
pub fn serve_connection(stream: &UdtStream, root: &Root, policy: Policy) -> Result<Served> {
    let first = read_first(stream)?;
    serve_after(stream, first, root, policy)
}

/// The first 4 bytes of a connection, which name its protocol.
pub fn read_first(stream: &UdtStream) -> Result<[u8; 4]> {
    let mut first = [0u8; 4];
    (&*stream)
        .read_exact(&mut first)
        .map_err(|e| TransferError::io("connection", &e))?;
    Ok(first)
}

/// [`serve_connection`] once its first 4 bytes (`first`) have been read.
pub fn serve_after(
    stream: &UdtStream,
    first: [u8; 4],
    root: &Root,
    policy: Policy,
) -> Result<Served> {
    if !is_magic(first) {
        return legacy::serve_classic(stream, first, root, Watchdog::standard())
            .map(Served::Legacy);
    }
    let mut link = Link::watched(stream, Watchdog::standard());
    let result = serve_ours(&mut link, root, policy);
    result.map_err(|e| link.fail(e))
}

/// Turn away a connection of our protocol (its magic read) with `err`, which the client
/// prints as the server's error.
pub fn refuse(stream: &UdtStream, err: TransferError) -> TransferError {
    let mut link = Link::watched(stream, Watchdog::standard());
    link.fail(err)
}

/// The server's side of our protocol, after the magic.
pub fn serve_ours(link: &mut Link<'_>, root: &Root, policy: Policy) -> Result<Served> {
    match link.reader.next_frame()? {
        Frame::Hello { version } if version >= 1 => {}
        Frame::Hello { version } => {
            return Err(TransferError::new(
                ErrorCode::Unsupported,
                format!("protocol version {version} is not supported"),
            ))
        }
        other => return Err(unexpected(other, "in the greeting")),
    }
    link.send(&Frame::Hello { version: VERSION })?;
    link.push()?;
    match link.reader.next_frame()? {
        Frame::Get { recursive, paths } => {
            let manifest = manifest_under(root, &paths, recursive)?;
            sender::send(link, &manifest, &Quiet).map(Served::Sent)
        }
        Frame::Put {
            dest,
            force,
            resume,
        } => {
            if policy.read_only {
                return Err(TransferError::new(
                    ErrorCode::PermissionDenied,
                    "this server is read-only: uploads are refused",
                ));
            }
            let dest = root.resolve_destination(dest.as_ref())?;
            let replace = match (force, policy.allow_overwrite) {
                (false, _) => Replace::Never,
                (true, false) => Replace::Refused,
                (true, true) => Replace::Allowed,
            };
            let opts = ReceiveOptions {
                replace,
                resume,
                max_file_size: policy.max_file_size,
            };
            receiver::receive(link, &dest, opts, &Accept::Any, &Quiet).map(Served::Received)
        }
        other => Err(unexpected(other, "as a request")),
    }
}

/// The manifest of `paths` resolved under `root`; each keeps its last component as name.
fn manifest_under(root: &Root, paths: &[RelPath], recursive: bool) -> Result<Manifest> {
    let mut manifest = Manifest::default();
    for path in paths {
        let source = root.resolve_existing(Some(path))?;
        let name = path.names().last().map(RelPath::from_name);
        let Some(name) = name.transpose()? else {
            return Err(TransferError::protocol("empty path"));
        };
        manifest.add(&source, name, recursive)?;
    }
    Ok(manifest)
}
