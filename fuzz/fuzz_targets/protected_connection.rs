//! Fuzz target: `udt_proto::fuzzing::protected_connection` (the property is documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| udt_proto::fuzzing::protected_connection(data));
