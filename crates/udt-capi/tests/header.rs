//! The committed header (`include/udt_capi.h`, what C users include) must be what cbindgen
//! generates from the code now (build.rs writes it to OUT_DIR). `UDT_CAPI_BLESS=1 cargo test
//! -p udt-capi --test header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let generated = Path::new(env!("OUT_DIR")).join("udt_capi.h");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/udt_capi.h");
    let fresh = std::fs::read_to_string(&generated).expect("build.rs wrote the header");
    if std::env::var_os("UDT_CAPI_BLESS").is_some() {
        std::fs::write(&committed, &fresh).expect("write include/udt_capi.h");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == fresh,
        "include/udt_capi.h is stale: run `UDT_CAPI_BLESS=1 cargo test -p udt-capi --test header` \
         and commit it"
    );
}
