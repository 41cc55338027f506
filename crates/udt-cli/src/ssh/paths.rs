//! Remote paths as typed after `host:`, as paths under the remote side's root, `/`.
//!
//! Over SSH the remote user's permissions are the boundary, so the one-shot server serves
//! `/` and the client names every path from there: absolute paths as they are, relative ones
//! (and `~`, `~/...`) from the remote working directory, the login directory, which the ready
//! line reports. Leading `..` components climb from that directory (it is the physical path,
//! from `getcwd`, so that is exact); a `..` after a name is refused, as a symbolic link would
//! make its meaning differ from the remote shell's. `~user` is not expanded.

use crate::transfer::paths::RelPath;
use crate::transfer::{ErrorCode, TransferError};

/// `typed` (the part after `host:`) relative to `/` on the remote host, whose working
/// directory is `cwd`; `None` is `/` itself.
pub fn under_root(typed: &[u8], cwd: &[u8]) -> Result<Option<RelPath>, TransferError> {
    let (base, rest): (&[u8], &[u8]) = if typed.first() == Some(&b'/') {
        (b"", typed)
    } else if typed == b"~" {
        (cwd, b"")
    } else if let Some(rest) = typed.strip_prefix(b"~/") {
        (cwd, rest)
    } else {
        (cwd, typed)
    };
    let mut names: Vec<&[u8]> = base
        .split(|&b| b == b'/')
        .filter(|n| !n.is_empty() && *n != b".")
        .collect();
    let mut climbing = true;
    for name in rest.split(|&b| b == b'/') {
        match name {
            b"" | b"." => {}
            b".." if climbing => {
                names.pop();
            }
            b".." => {
                return Err(TransferError::new(
                    ErrorCode::PathRefused,
                    format!(
                        "{}: '..' after a name is refused (write the path without it)",
                        String::from_utf8_lossy(typed)
                    ),
                ))
            }
            _ => {
                climbing = false;
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        return Ok(None);
    }
    RelPath::parse(&names.join(&b'/')).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(typed: &str) -> Option<String> {
        under_root(typed.as_bytes(), b"/home/me")
            .unwrap()
            .map(|p| p.display())
    }

    #[test]
    fn relative_paths_start_at_the_login_directory() {
        assert_eq!(map("f").as_deref(), Some("home/me/f"));
        assert_eq!(map("").as_deref(), Some("home/me"));
        assert_eq!(map(".").as_deref(), Some("home/me"));
        assert_eq!(map("~").as_deref(), Some("home/me"));
        assert_eq!(map("~/a//b/").as_deref(), Some("home/me/a/b"));
        assert_eq!(map("./a/./b").as_deref(), Some("home/me/a/b"));
        assert_eq!(map("../you/f").as_deref(), Some("home/you/f"));
        assert_eq!(map("../../..").as_deref(), None);
        assert_eq!(map("~user/f").as_deref(), Some("home/me/~user/f"));
    }

    #[test]
    fn absolute_paths_stay() {
        assert_eq!(map("/").as_deref(), None);
        assert_eq!(map("/etc/hosts").as_deref(), Some("etc/hosts"));
        assert_eq!(map("//srv/./x/").as_deref(), Some("srv/x"));
        assert_eq!(map("/../tmp").as_deref(), Some("tmp"));
        assert_eq!(
            under_root(b"f", b"/")
                .unwrap()
                .map(|p| p.display())
                .as_deref(),
            Some("f")
        );
    }

    #[test]
    fn dot_dot_after_a_name_is_refused() {
        for bad in ["a/../b", "/etc/../x", "~/a/.."] {
            let err = under_root(bad.as_bytes(), b"/home/me").unwrap_err();
            assert_eq!(err.code, ErrorCode::PathRefused, "{bad}");
        }
    }
}
