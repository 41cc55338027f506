//! Generates the C header from this crate's `extern "C"` items with cbindgen, into
//! `$OUT_DIR/udt_capi.h`; `tests/header.rs` checks that the committed
//! `include/udt_capi.h` is the same (and rewrites it with `UDT_CAPI_BLESS=1`).

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("udt_capi.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("crates/udt-capi/cbindgen.toml is readable and valid");
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could parse crates/udt-capi/src")
        .write_to_file(&out);
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
}
