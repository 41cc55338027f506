//! Path validation and confinement under a root.

use std::fs;
use std::os::unix::fs::symlink;

use proptest::prelude::*;

use super::*;

#[test]
fn plain_relative_paths_pass() {
    for good in [
        "f",
        "dir/f.bin",
        "a/b/c",
        "ünïcødé/файл",
        "..hidden",
        "a..b",
    ] {
        assert!(RelPath::parse(good.as_bytes()).is_ok(), "{good}");
    }
}

#[test]
fn traversal_and_odd_paths_are_refused() {
    let long_name = "x".repeat(256);
    let long_path = "a/".repeat(2049);
    for bad in [
        "",
        "/etc/passwd",
        "..",
        "../x",
        "a/../../x",
        "./f",
        "a/./b",
        "a//b",
        "a/",
        "a\0b",
        &long_name,
        &long_path,
    ] {
        let err = RelPath::parse(bad.as_bytes()).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{bad:?}");
    }
}

#[test]
fn request_paths_are_normalised() {
    assert_eq!(RelPath::parse_request(b"").unwrap(), None);
    assert_eq!(RelPath::parse_request(b"./").unwrap(), None);
    let p = RelPath::parse_request(b"./a//b/").unwrap().unwrap();
    assert_eq!(p.as_bytes(), b"a/b");
    assert!(RelPath::parse_request(b"/abs").is_err());
    assert!(RelPath::parse_request(b"a/../b").is_err());
}

#[test]
fn root_refuses_symlink_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let root_dir = dir.path().join("root");
    fs::create_dir_all(root_dir.join("sub")).unwrap();
    fs::write(dir.path().join("secret"), b"s").unwrap();
    fs::write(root_dir.join("sub/ok"), b"o").unwrap();
    symlink(dir.path().join("secret"), root_dir.join("leak")).unwrap();
    symlink(dir.path(), root_dir.join("out")).unwrap();
    symlink("sub/ok", root_dir.join("inside")).unwrap();
    let root = Root::new(&root_dir).unwrap();
    let rel = |s: &str| RelPath::parse(s.as_bytes()).unwrap();
    assert!(root.resolve_existing(Some(&rel("sub/ok"))).is_ok());
    assert!(root.resolve_existing(Some(&rel("inside"))).is_ok());
    for escape in ["leak", "out/secret"] {
        let err = root.resolve_existing(Some(&rel(escape))).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{escape}");
    }
    let err = root.resolve_destination(Some(&rel("out/new"))).unwrap_err();
    assert_eq!(err.code, ErrorCode::PathRefused);
    assert!(root.resolve_destination(Some(&rel("sub/new"))).is_ok());
    let err = create_dirs(root.dir(), &rel("out/x"), &mut 10).unwrap_err();
    assert_eq!(err.code, ErrorCode::PathRefused);
    assert!(create_dirs(root.dir(), &rel("n/m"), &mut 10)
        .unwrap()
        .is_dir());
    assert!(open_nofollow(&root_dir.join("leak")).is_err());
}

proptest! {
    #[test]
    fn parse_never_panics_and_accepts_only_confined_paths(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(p) = RelPath::parse(&bytes) {
            prop_assert!(p.as_path().is_relative());
            prop_assert!(p.names().all(|n| n != ".." && n != "." && !n.is_empty()));
        }
        let _ = RelPath::parse_request(&bytes);
    }
}

#[test]
fn directories_created_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let deep = RelPath::parse(b"a/b/c/d").unwrap();
    let mut allowance = 3;
    let err = create_dirs(dir.path(), &deep, &mut allowance).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unsupported);
    assert!(err.message.contains("directories"), "{}", err.message);
    assert!(!dir.path().join("a/b/c/d").exists());
    // Existing directories cost nothing.
    let mut allowance = 1;
    create_dirs(dir.path(), &deep, &mut allowance).unwrap();
}

/// A FIFO where a file was named: refused at once, never opened for a blocking read.
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(open_regular(&path).map(drop));
    });
    let opened = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("opening a FIFO blocked");
    assert!(opened.is_err());
    fs::write(dir.path().join("f"), b"x").unwrap();
    assert!(open_regular(&dir.path().join("f")).is_ok());
}

#[test]
fn the_umask_is_read() {
    // What the kernel applies to a file created 0777 (without changing the process's mask,
    // which other tests running meanwhile depend on).
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o777)
        .open(&path)
        .unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o777 & !umask());
}
