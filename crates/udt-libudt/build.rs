//! Compiles the C++ glue against the system's `udt.h` (Debian libudt-dev) and makes the
//! cdylib a `libudt.so.0`: its soname, and the exports a program linked against libudt 4.11
//! looks up (the `UDT::` functions, `CUDTException` and `CCC` with their virtual tables).
//! rustc's own version script exports only Rust symbols; ours adds the C++ ones.

use std::path::Path;

const UDT_INCLUDE: &str = "/usr/include/udt";

fn main() {
    println!("cargo:rerun-if-changed=cpp/glue.cpp");
    println!("cargo:rerun-if-changed=cpp/exports.map");
    if !Path::new(UDT_INCLUDE).join("udt.h").exists() {
        // A build script has no better way to stop the build with a message.
        panic!(
            "{UDT_INCLUDE}/udt.h is missing: udt-libudt is built against Debian's libudt-dev \
             headers (run scripts/setup.sh, or apt-get install libudt-dev)"
        );
    }
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(UDT_INCLUDE)
        .flag("-fvisibility=default")
        .warnings(true)
        .extra_warnings(true)
        .flag("-Wno-unused-parameter")
        .file("cpp/glue.cpp")
        .link_lib_modifier("+whole-archive")
        .compile("udt_libudt_glue");
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("cpp/exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libudt.so.0");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
}
