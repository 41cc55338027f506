//! Fuzz target: `udt_proto::fuzzing::mux_input` (the property is documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| udt_proto::fuzzing::mux_input(data));
