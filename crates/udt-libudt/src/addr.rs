//! `struct sockaddr` in and out, with 4.11's rules: a socket of family AF_INET takes and
//! gives exactly a `sockaddr_in`, one of AF_INET6 a `sockaddr_in6` (IPv4 peers of a
//! dual-stack socket appear IPv4-mapped).

use std::mem::size_of;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::error::{Code, Result};

/// The `namelen` a socket of family `af` takes and gives.
pub fn len_for(af: i32) -> usize {
    if af == libc::AF_INET {
        size_of::<libc::sockaddr_in>()
    } else {
        size_of::<libc::sockaddr_in6>()
    }
}

/// Read the address at `name` (`namelen` bytes) for a socket of family `af`. EINVPARAM
/// (5003) for a length other than the family's, or another family.
///
/// # Safety
/// `name` must point to `namelen` readable bytes (or be null).
pub unsafe fn read(af: i32, name: *const libc::sockaddr, namelen: i32) -> Result<SocketAddr> {
    if name.is_null() || usize::try_from(namelen).ok() != Some(len_for(af)) {
        return Err(Code::InvParam.into());
    }
    if af == libc::AF_INET {
        // SAFETY: the caller gave `namelen` = size_of::<sockaddr_in>() readable bytes; the
        // read is unaligned because C callers may pass any buffer.
        let sin = unsafe { std::ptr::read_unaligned(name.cast::<libc::sockaddr_in>()) };
        if i32::from(sin.sin_family) != libc::AF_INET {
            return Err(Code::InvParam.into());
        }
        let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
        Ok(SocketAddr::V4(SocketAddrV4::new(
            ip,
            u16::from_be(sin.sin_port),
        )))
    } else {
        // SAFETY: as above, with size_of::<sockaddr_in6>() bytes.
        let sin6 = unsafe { std::ptr::read_unaligned(name.cast::<libc::sockaddr_in6>()) };
        if i32::from(sin6.sin6_family) != libc::AF_INET6 {
            return Err(Code::InvParam.into());
        }
        let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
        Ok(SocketAddr::V6(SocketAddrV6::new(
            ip,
            u16::from_be(sin6.sin6_port),
            sin6.sin6_flowinfo,
            sin6.sin6_scope_id,
        )))
    }
}

/// Write `addr` at `name` as a socket of family `af` gives it, and its length at `namelen`.
/// EINVPARAM if either pointer is null or `*namelen` is smaller than the family's length
/// (4.11 writes without looking; we refuse rather than overrun).
///
/// # Safety
/// `name` must point to `*namelen` writable bytes, `namelen` to a writable `int`.
pub unsafe fn write(
    af: i32,
    addr: SocketAddr,
    name: *mut libc::sockaddr,
    namelen: *mut i32,
) -> Result<()> {
    if name.is_null() || namelen.is_null() {
        return Err(Code::InvParam.into());
    }
    let len = len_for(af);
    // SAFETY: `namelen` is non-null and the caller says it points to an int.
    let room = unsafe { namelen.read_unaligned() };
    if usize::try_from(room).map_or(true, |r| r < len) {
        return Err(Code::InvParam.into());
    }
    if af == libc::AF_INET {
        let v4 = match addr {
            SocketAddr::V4(a) => a,
            SocketAddr::V6(a) => SocketAddrV4::new(
                a.ip().to_ipv4_mapped().unwrap_or(Ipv4Addr::UNSPECIFIED),
                a.port(),
            ),
        };
        // SAFETY: all-zero is a valid sockaddr_in.
        let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        sin.sin_family = libc::AF_INET as libc::sa_family_t;
        sin.sin_port = v4.port().to_be();
        sin.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
        // SAFETY: the caller gave at least `len` writable bytes (checked against *namelen).
        unsafe { std::ptr::write_unaligned(name.cast::<libc::sockaddr_in>(), sin) };
    } else {
        let v6 = match addr {
            SocketAddr::V6(a) => a,
            SocketAddr::V4(a) => SocketAddrV6::new(a.ip().to_ipv6_mapped(), a.port(), 0, 0),
        };
        // SAFETY: all-zero is a valid sockaddr_in6.
        let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
        sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        sin6.sin6_port = v6.port().to_be();
        sin6.sin6_addr.s6_addr = v6.ip().octets();
        sin6.sin6_flowinfo = v6.flowinfo();
        sin6.sin6_scope_id = v6.scope_id();
        // SAFETY: as above.
        unsafe { std::ptr::write_unaligned(name.cast::<libc::sockaddr_in6>(), sin6) };
    }
    // SAFETY: checked non-null above. `len` is a sockaddr size, far below i32::MAX.
    unsafe { namelen.write_unaligned(len as i32) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_in_their_family_and_short_buffers_are_refused() {
        for (af, text) in [
            (libc::AF_INET, "10.1.2.3:4567"),
            (libc::AF_INET6, "[fe80::1]:9"),
        ] {
            let addr: SocketAddr = text.parse().unwrap();
            // SAFETY: all-zero is a valid sockaddr_storage, large enough for both families.
            let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let ptr = (&raw mut storage).cast::<libc::sockaddr>();
            let mut len = size_of::<libc::sockaddr_storage>() as i32;
            // SAFETY: `storage` has `len` bytes.
            unsafe { write(af, addr, ptr, &mut len) }.unwrap();
            assert_eq!(len as usize, len_for(af));
            // SAFETY: `write` filled `len` bytes.
            assert_eq!(unsafe { read(af, ptr, len) }, Ok(addr));
            // SAFETY: as above; the wrong length is refused before reading.
            assert!(unsafe { read(af, ptr, len - 1) }.is_err());
            let mut short = len - 1;
            // SAFETY: refused before writing.
            assert!(unsafe { write(af, addr, ptr, &mut short) }.is_err());
        }
    }
}
