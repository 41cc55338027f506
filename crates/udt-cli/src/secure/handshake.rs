//! The Noise XX handshake at the start of a keyed session, and the switch to packet
//! protection.
//!
//! ```text
//! client                                   server
//! "UDTn", [len] -> e                 ──▶   (first 4 bytes tell the protocols apart)
//!                                    ◀──   [len] <- e, ee, s, es
//! [len] -> s, se                     ──▶
//! flush (all acknowledged); both start protection with the session key
//!                                    ◀──   verdict (protected): 0 = admitted, or 1 + reason
//! ... the file protocol, protected ...
//! ```
//! Each side flushes before it starts protection, so no plaintext handshake byte is still
//! unacknowledged when the other side begins refusing plaintext. The session key is
//! `BLAKE3-derive-key("udt1 noise session key", k1 | k2)` over Noise's two transport keys:
//! secret to the two ends, fresh per session (both ephemerals), and bound to both long-term
//! keys. The prologue binds the protocol name, so a handshake for something else cannot be
//! replayed into ours.

use std::io::{Read, Write};

use anyhow::{bail, Context};
use udt::{SessionKey, UdtStream};
use zeroize::Zeroizing;

use super::keyfile::NOISE_PARAMS;
use super::{KeyPair, PublicKey};

/// The 4 bytes that open a keyed session.
pub const MAGIC: [u8; 4] = *b"UDTn";
/// Noise prologue: both sides must agree on it.
const PROLOGUE: &[u8] = b"udt keyed session v1";
/// Largest handshake message accepted (XX's are under 100 bytes).
const MAX_MESSAGE: usize = 1024;

/// The client's side on a fresh connection (opened with `SocketOptions::set_protect_later`):
/// returns the server's key once the session is protected and the server admitted us.
pub fn client(stream: &UdtStream, me: &KeyPair) -> anyhow::Result<PublicKey> {
    let mut hs = snow::Builder::new(NOISE_PARAMS.parse()?)
        .local_private_key(me.private())?
        .prologue(PROLOGUE)?
        .build_initiator()?;
    let mut w = stream;
    w.write_all(&MAGIC)?;
    send(stream, &mut hs)?;
    receive(stream, &mut hs).context("the server's handshake")?;
    send(stream, &mut hs)?;
    let server = remote_key(&hs)?;
    let key = session_key(&mut hs);
    (&*stream).flush()?;
    stream.start_protection(&key)?;
    let mut verdict = [0u8; 1];
    (&*stream)
        .read_exact(&mut verdict)
        .context("waiting for the server's verdict")?;
    if verdict[0] != 0 {
        let reason = read_message(stream).unwrap_or_default();
        bail!(
            "the server refused our key {}: {}",
            me.public(),
            String::from_utf8_lossy(&reason)
        );
    }
    Ok(server)
}

/// The server's side, after it read [`MAGIC`]: returns the client's key once the session is
/// protected. Call [`admit`] or [`refuse`] next.
pub fn server(stream: &UdtStream, me: &KeyPair) -> anyhow::Result<PublicKey> {
    let mut hs = snow::Builder::new(NOISE_PARAMS.parse()?)
        .local_private_key(me.private())?
        .prologue(PROLOGUE)?
        .build_responder()?;
    receive(stream, &mut hs)?;
    send(stream, &mut hs)?;
    (&*stream).flush()?;
    receive(stream, &mut hs)?;
    let client = remote_key(&hs)?;
    let key = session_key(&mut hs);
    stream.start_protection(&key)?;
    Ok(client)
}

/// Tell the client it is admitted.
pub fn admit(stream: &UdtStream) -> anyhow::Result<()> {
    (&*stream).write_all(&[0])?;
    Ok(())
}

/// Tell the client why it is refused (protected: only it can read this).
pub fn refuse(stream: &UdtStream, reason: &str) -> anyhow::Result<()> {
    let mut w = stream;
    w.write_all(&[1])?;
    let reason = &reason.as_bytes()[..reason.len().min(MAX_MESSAGE)];
    w.write_all(&(reason.len() as u16).to_be_bytes())?;
    w.write_all(reason)?;
    w.flush()?;
    Ok(())
}

fn send(stream: &UdtStream, hs: &mut snow::HandshakeState) -> anyhow::Result<()> {
    let mut buf = [0u8; MAX_MESSAGE];
    let n = hs.write_message(&[], &mut buf)?;
    let mut w = stream;
    w.write_all(&(n as u16).to_be_bytes())?;
    w.write_all(&buf[..n])?;
    Ok(())
}

fn receive(stream: &UdtStream, hs: &mut snow::HandshakeState) -> anyhow::Result<()> {
    let msg = read_message(stream)?;
    let mut out = [0u8; MAX_MESSAGE];
    hs.read_message(&msg, &mut out)
        .map_err(|e| anyhow::anyhow!("key exchange failed ({e}): wrong peer, or tampered"))?;
    Ok(())
}

/// One length-prefixed message, at most [`MAX_MESSAGE`] bytes.
fn read_message(stream: &UdtStream) -> anyhow::Result<Vec<u8>> {
    let mut r = stream;
    let mut len = [0u8; 2];
    r.read_exact(&mut len)?;
    let len = usize::from(u16::from_be_bytes(len));
    if len > MAX_MESSAGE {
        bail!("handshake message of {len} bytes (at most {MAX_MESSAGE})");
    }
    let mut msg = vec![0u8; len];
    r.read_exact(&mut msg)?;
    Ok(msg)
}

fn remote_key(hs: &snow::HandshakeState) -> anyhow::Result<PublicKey> {
    let remote = hs.get_remote_static().context("the peer sent no key")?;
    let mut key = [0u8; 32];
    key.copy_from_slice(remote.get(..32).context("short peer key")?);
    Ok(PublicKey(key))
}

fn session_key(hs: &mut snow::HandshakeState) -> SessionKey {
    let (k1, k2) = hs.dangerously_get_raw_split();
    let (k1, k2) = (Zeroizing::new(k1), Zeroizing::new(k2));
    let mut both = Zeroizing::new([0u8; 64]);
    both[..32].copy_from_slice(&k1[..]);
    both[32..].copy_from_slice(&k2[..]);
    SessionKey::from_bytes(blake3::derive_key("udt1 noise session key", &both[..]))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::thread;
    use std::time::Duration;

    use udt::{SocketOptions, UdtListener, UdtStream};

    use super::*;

    fn later() -> SocketOptions {
        let mut o = SocketOptions::default();
        o.set_protect_later(true);
        o
    }

    /// Run a server that admits `allowed` and echoes one message; returns what the client
    /// saw of the server's key and the server's view of the client.
    fn session(
        client_key: KeyPair,
        allowed: PublicKey,
    ) -> (anyhow::Result<PublicKey>, PublicKey, PublicKey) {
        let server_key = KeyPair::generate().unwrap();
        let server_public = server_key.public();
        let listener = UdtListener::bind_with("127.0.0.1:0", later()).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut magic = [0u8; 4];
            (&s).read_exact(&mut magic).unwrap();
            assert_eq!(magic, MAGIC);
            let client = server(&s, &server_key).unwrap();
            if client == allowed {
                admit(&s).unwrap();
                let mut buf = [0u8; 5];
                (&s).read_exact(&mut buf).unwrap();
                (&s).write_all(&buf).unwrap();
                (&s).flush().unwrap();
                assert!(s.is_peer_authenticated());
            } else {
                refuse(&s, "not in authorized_keys").unwrap();
            }
            client
        });
        let c = UdtStream::connect_with(addr, later()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let result = client(&c, &client_key);
        if result.is_ok() {
            (&c).write_all(b"hello").unwrap();
            let mut buf = [0u8; 5];
            (&c).read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"hello");
            assert!(c.is_peer_authenticated());
        }
        let seen = server.join().unwrap();
        (result, seen, server_public)
    }

    #[test]
    fn both_sides_learn_each_others_keys_and_talk_protected() {
        let me = KeyPair::generate().unwrap();
        let my_public = me.public();
        let (result, seen, server_public) = session(me, my_public);
        assert_eq!(result.unwrap(), server_public);
        assert_eq!(seen, my_public);
    }

    #[test]
    fn an_unknown_client_is_refused_with_the_reason() {
        let me = KeyPair::generate().unwrap();
        let (result, _, _) = session(me, PublicKey([9; 32]));
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("refused our key") && err.contains("authorized_keys"),
            "{err}"
        );
    }
}
